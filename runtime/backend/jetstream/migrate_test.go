package jetstream_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// TestMigrateThereAndBack: an embedded store is copied into the cluster
// (resuming a copy cut short, verifying counts), and back into a new data
// directory, ids, files, agents and settings kept.
func TestMigrateThereAndBack(t *testing.T) {
	files, err := backend.OpenFiles(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		m := session.NewMeta(time.Now())
		m.Title = session.Str(fmt.Sprint("session ", i))
		if err := files.Sessions().Create(m); err != nil {
			t.Fatal(err)
		}
		for n := range 70 * i {
			msg := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(fmt.Sprint(n))}}
			if err := files.Sessions().Append(m.ID, msg); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, m.ID)
	}
	fs, _ := files.Files(1<<20, time.Now)
	f, err := fs.Put(ids[1], sessionfiles.Upload{Filename: "a.txt"}, bytes.NewReader([]byte("file body")))
	if err != nil {
		t.Fatal(err)
	}
	bs, _ := files.Bundles()
	data := bundletest.Config("name: helper\n")
	ag, _ := bundle.New(data, 1<<20, time.Now())
	if err := bs.Put(ag, data); err != nil {
		t.Fatal(err)
	}
	docs, _ := files.Docs("sessions-api")
	docs.Put(ids[0], []byte(`{"agent_id":"`+ag.ID+`"}`))

	cluster := open(t, natstest.Single(t).URL(), "migrator", 1)
	// A copy cut short: the cluster holds half of session 2.
	conv, _ := files.Sessions().Load(ids[2])
	cluster.Sessions().Create(conv.Meta)
	cluster.Sessions().Append(ids[2], conv.Messages[:30]...)

	var last [2]int
	r, err := backend.Migrate(files, cluster, backend.MigrateOptions{Progress: func(d, n int) { last = [2]int{d, n} }})
	if err != nil {
		t.Fatal(err)
	}
	want := backend.MigrateReport{Sessions: 3, Messages: 210, Copied: 3, Agents: 1, Files: 1, Settings: 1}
	if r != want || last != [2]int{3, 3} {
		t.Fatalf("migrate: %+v (progress %v), want %+v", r, last, want)
	}
	if r, err := backend.Migrate(files, cluster, backend.MigrateOptions{}); err != nil || r.Copied != 0 || r.Messages != 210 {
		t.Fatalf("running it again: %+v %v", r, err)
	}

	back, err := backend.OpenFiles(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := backend.Migrate(cluster, back, backend.MigrateOptions{}); err != nil || r.Messages != 210 || r.Files != 1 || r.Agents != 1 {
		t.Fatalf("back: %+v %v", r, err)
	}
	got := texts(t, back, ids[2])
	if len(got) != 140 || got[139] != "139" {
		t.Fatalf("session 2 back: %d messages", len(got))
	}
	bfs, _ := back.Files(1<<20, time.Now)
	_, rc, err := bfs.Open(ids[1], f.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if string(body) != "file body" {
		t.Fatalf("file back: %q", body)
	}
	bbs, _ := back.Bundles()
	if got, err := bbs.Get(ag.ID); err != nil || got.Name != "helper" {
		t.Fatalf("agent back: %+v %v", got, err)
	}
}
