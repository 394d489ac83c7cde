// Command gensessions fills a data directory with synthetic sessions for
// the sessions benchmark: N sessions of M messages of about 30 words each,
// written through the real store so the files are exactly what openheim
// writes.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

var vocabulary = strings.Fields(`auth token refresh database migration schema index query cache
test build deploy release rollback config provider model stream event tool file search memory
session agent prompt error retry timeout server client request response handler router queue
worker lock lease fork export import parser lexer compiler linker module package vendor update
docker kube helm terraform bucket object storage network socket proxy tls certificate key`)

func main() {
	home := flag.String("home", "", "data directory to fill")
	n := flag.Int("sessions", 10000, "sessions")
	m := flag.Int("messages", 20, "messages per session")
	flag.Parse()
	store, err := session.NewFileStore(filepath.Join(*home, "history"))
	if err != nil {
		fail(err)
	}
	// Word frequencies follow Zipf's law as in real text: a few words are
	// everywhere, most are rare. The topic words sit at ranks 100-184, so a
	// query for two of them matches a few percent of messages.
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%04d", i)
	}
	copy(vocab[100:], vocabulary)
	zipf := rand.NewZipf(rand.New(rand.NewPCG(9, 9)), 1.07, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}

	start := time.Now().Add(-time.Duration(*n) * time.Minute)
	for i := range *n {
		meta := session.NewMeta(start.Add(time.Duration(i) * time.Minute))
		meta.Title = session.Str(words(6))
		meta.Model, meta.Provider, meta.Cwd = session.Str("gpt-4o"), session.Str("openai"), session.Str("/home/me/project")
		if err := store.Create(meta); err != nil {
			fail(err)
		}
		msgs := make([]message.Message, *m)
		for j := range msgs {
			role := message.RoleUser
			if j%2 == 1 {
				role = message.RoleAssistant
			}
			msgs[j] = message.Message{Role: role, Content: []message.Block{message.Text(words(30))}}
		}
		if err := store.Append(meta.ID, msgs...); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gensessions:", err)
	os.Exit(1)
}
