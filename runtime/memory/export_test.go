package memory

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestExportImportRoundTrip(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "first <note> & more", "second\nnote on two lines", "third note")
	_, err := m.Edit(1, "first note, edited")
	must(t, err)
	must(t, m.Delete(3))
	var out bytes.Buffer
	must(t, m.Export(&out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first Note
	must(t, json.Unmarshal([]byte(lines[0]), &first))
	if len(lines) != 2 || first.ID != 1 || strings.Contains(out.String(), `\u003c`) {
		t.Fatalf("export (oldest first):\n%s", out.String())
	}

	m2, _ := open(t, Options{})
	add(t, m2, "already here")
	n, err := m2.Import(bytes.NewReader(out.Bytes()))
	must(t, err)
	if n != 2 {
		t.Fatalf("Import = %d, want 2", n)
	}
	list, err := m2.List()
	must(t, err)
	orig, _ := m.List()
	byContent := map[string]Note{}
	for _, n := range list {
		byContent[n.Content] = n
	}
	for _, o := range orig {
		got, ok := byContent[o.Content]
		if !ok || got.ID <= 1 || !got.CreatedAt.Equal(o.CreatedAt) || !got.UpdatedAt.Equal(o.UpdatedAt) {
			t.Errorf("imported %+v, original %+v", got, o)
		}
	}
	if ids, _ := search(t, m2, "lines", 5); len(ids) != 1 {
		t.Errorf("imported notes are not indexed: %v", ids)
	}
	// Importing again adds nothing: exact duplicates are skipped.
	if n, err := m2.Import(bytes.NewReader(out.Bytes())); n != 0 || err != nil {
		t.Errorf("second Import = %d, %v", n, err)
	}
}

func TestImport(t *testing.T) {
	for _, c := range []struct {
		name, in string
		added    int
		err      string
	}{
		{"content only, blank lines, duplicates within the file",
			"{\"content\":\"a\"}\n\n{\"content\":\" a \"}\n{\"content\":\"b\",\"created_at\":\"2020-01-02T03:04:05Z\"}\n", 2, ""},
		{"bad JSON fails the whole import", "{\"content\":\"a\"}\n{oops\n", 0, "line 2"},
		{"missing content", "{\"created_at\":\"2020-01-02T03:04:05Z\"}\n", 0, `line 1: no "content"`},
		{"too long", `{"content":"` + strings.Repeat("x", 4001) + `"}`, 0, "line 1: note is 4001 characters; the limit is 4000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := open(t, Options{})
			n, err := m.Import(strings.NewReader(c.in))
			if n != c.added || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Import = %d, %v; want %d, %q", n, err, c.added, c.err)
			}
			if total, _ := m.Len(); total != c.added {
				t.Errorf("%d notes after the import", total)
			}
			if c.added == 2 {
				b, _ := m.Get(2)
				if want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC); !b.CreatedAt.Equal(want) || !b.UpdatedAt.Equal(want) {
					t.Errorf("times of b: %+v", b)
				}
				a, _ := m.Get(1)
				if a.CreatedAt.Before(t0) {
					t.Errorf("a note without created_at got %v, want now", a.CreatedAt)
				}
			}
		})
	}
}
