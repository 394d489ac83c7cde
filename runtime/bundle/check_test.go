package bundle

import (
	"archive/tar"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	bt "github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/storeerr"
)

const testMax = 64 << 10

const fullConfig = `name: reviewer
description: Reviews diffs
model: fake/m1
provider: fake
instructions: |
  You review code.
  Cite file:line.
skills: [go, review]
tools:
  - read_file
  - search_files
max_iterations: 7
`

func TestNew(t *testing.T) {
	ag, err := New(bt.Config(fullConfig), testMax, time.Unix(2000, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := Agent{
		ID: ag.ID, Object: "agent", Name: "reviewer", Description: "Reviews diffs", CreatedAt: 2000,
		Model: "fake/m1", Provider: "fake", Instructions: "You review code.\nCite file:line.",
		Skills: []string{"go", "review"}, Tools: []string{"read_file", "search_files"}, MaxIterations: 7, Source: "bundle",
	}
	if !regexp.MustCompile(`^ag_[0-9a-f]{24}$`).MatchString(ag.ID) {
		t.Errorf("id %q", ag.ID)
	}
	if !reflect.DeepEqual(ag, want) {
		t.Errorf("new\n got %+v\nwant %+v", ag, want)
	}
	for name, b := range map[string][]byte{
		"in-dir":     bt.TarGz(bt.Dir("in-dir/"), bt.File("in-dir/config.yaml", "name: in-dir\n"), bt.File("in-dir/notes/a.md", "x")),
		"dot-slash":  bt.TarGz(bt.Dir("./"), bt.File("./config.yaml", "name: dot-slash\n"), bt.File("./README.md", "x")),
		"empty-list": bt.TarGz(bt.File("config.yaml", "name: empty-list\ntools: []\n")),
		"minimal":    bt.Config("name: minimal\n"),
	} {
		ag, err := New(b, testMax, time.Now())
		if err != nil || ag.Name != name || ag.Skills == nil {
			t.Errorf("%s: %+v %v", name, ag, err)
		}
		if name == "empty-list" && (ag.Tools == nil || len(ag.Tools) != 0) {
			t.Errorf("tools: [] must be no tools, got %#v", ag.Tools)
		}
		if name == "minimal" && ag.Tools != nil {
			t.Errorf("no tools key must be every tool (nil), got %#v", ag.Tools)
		}
	}
}

// TestNewRefusals: what a hostile or broken bundle gets, and the kind the
// sessions API turns into its status.
func TestNewRefusals(t *testing.T) {
	big := make([]byte, testMax+1)
	rand.Read(big)
	valid := bt.Config("name: cut\n")
	many := []bt.Entry{bt.File("config.yaml", "name: many\n")}
	for i := range MaxEntries {
		many = append(many, bt.File(fmt.Sprintf("f%d", i), ""))
	}
	link := func(typ byte) bt.Entry {
		return bt.Entry{Hdr: tar.Header{Name: "config.yaml", Typeflag: typ, Linkname: "/etc/passwd"}}
	}
	lying := bt.File("config.yaml", "name: x\n")
	lying.Hdr.Size = UnpackFactor*testMax + 1
	invalid := storeerr.ErrInvalid
	for _, c := range []struct {
		name   string
		bundle []byte
		kind   error
		want   string
	}{
		{"not gzip", []byte("hello, not a tarball"), invalid, "not a gzip file"},
		{"corrupt tar", bt.Gzip([]byte(strings.Repeat("garbage!", 200))), invalid, "corrupt tar"},
		{"truncated", valid[:len(valid)-12], invalid, "corrupt"},
		{"over max", big, storeerr.ErrTooLarge, fmt.Sprintf("bundle is over %d bytes", testMax)},
		{"absolute", bt.TarGz(bt.File("/etc/config.yaml", "name: x\n")), invalid, "path traversal"},
		{"drive letter", bt.TarGz(bt.File(`C:\config.yaml`, "name: x\n")), invalid, "path traversal"},
		{"dotdot", bt.TarGz(bt.File("config.yaml", "name: x\n"), bt.File("a/../../evil", "")), invalid, "path traversal"},
		{"backslash dotdot", bt.TarGz(bt.File(`..\evil`, "")), invalid, "path traversal"},
		{"symlink", bt.TarGz(link(tar.TypeSymlink)), invalid, "links are not allowed"},
		{"hardlink", bt.TarGz(link(tar.TypeLink)), invalid, "links are not allowed"},
		{"device", bt.TarGz(bt.Entry{Hdr: tar.Header{Name: "tty", Typeflag: tar.TypeChar, Devmajor: 5}}), invalid, "only files and directories"},
		{"too many entries", bt.TarGz(many...), invalid, "more than 1000 entries"},
		{"zip bomb", bt.TarGz(bt.File("config.yaml", "name: bomb\n"), bt.File("zeros", strings.Repeat("\x00", UnpackFactor*testMax))), invalid, "unpacks to over"},
		{"size claim over the cap", bt.TarGz(lying), invalid, "unpacks to over"},
		{"no config", bt.TarGz(bt.File("README.md", "hi")), invalid, "no config.yaml"},
		{"config two dirs", bt.TarGz(bt.File("a/config.yaml", "name: x\n"), bt.File("b/x", "")), invalid, "no config.yaml"},
		{"config too deep", bt.TarGz(bt.File("a/b/config.yaml", "name: x\n")), invalid, "no config.yaml"},
		{"config twice", bt.TarGz(bt.File("config.yaml", "name: x\n"), bt.File("./config.yaml", "name: y\n")), invalid, "twice"},
		{"invalid yaml", bt.Config("name: [unclosed\n"), invalid, "config.yaml"},
		{"not a mapping", bt.Config("- a\n- b\n"), invalid, "a mapping of keys"},
		{"unknown key", bt.Config("name: x\ncolour: red\n"), invalid, "field colour not found (known keys: name,"},
		{"two documents", bt.Config("name: x\n---\nname: y\n"), invalid, "one YAML document"},
		{"empty config", bt.Config(""), invalid, "empty"},
		{"no name", bt.Config("description: nameless\n"), invalid, "name is missing"},
		{"bad name", bt.Config("name: -dash\n"), invalid, "must match"},
		{"long name", bt.Config("name: " + strings.Repeat("n", 65) + "\n"), invalid, "must match"},
		{"negative iterations", bt.Config("name: x\nmax_iterations: -1\n"), invalid, "max_iterations"},
		{"empty skill", bt.Config("name: x\nskills: [\"\"]\n"), invalid, "skills[0] is empty"},
		{"empty tool", bt.Config("name: x\ntools: [a, \"\"]\n"), invalid, "tools[1] is empty"},
	} {
		_, err := New(c.bundle, testMax, time.Now())
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %v with %q", c.name, err, c.kind, c.want)
		}
	}
}

// TestNewConfigTooBig: config.yaml has a limit of its own, below what a
// large bundle may unpack to.
func TestNewConfigTooBig(t *testing.T) {
	b := bt.TarGz(bt.File("config.yaml", "name: x\n#"+strings.Repeat("x", maxConfig)))
	if _, err := New(b, 1<<20, time.Now()); !errors.Is(err, storeerr.ErrInvalid) || !strings.Contains(err.Error(), "config.yaml is over") {
		t.Errorf("config over its limit: %v", err)
	}
}
