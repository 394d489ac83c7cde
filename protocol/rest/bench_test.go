package rest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// BenchmarkListSessions serves GET /api/sessions over 1,000 stored sessions
// (two messages each): from the store alone, through the index, and through
// the index with a page size. The handler is called directly, so the
// numbers are the handler's work without the network.
func BenchmarkListSessions(b *testing.B) {
	const n = 1000
	for _, c := range []struct {
		name    string
		catalog bool
		query   string
	}{
		{"store", false, ""},
		{"catalog", true, ""},
		{"catalog/limit=50", true, "?limit=50"},
		{"store/limit=50", false, "?limit=50"},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, seedConfig, c.catalog)
			base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range n {
				m := session.NewMeta(base.Add(time.Duration(i) * time.Minute))
				m.Title = session.Str(fmt.Sprintf("session %d", i))
				m.Cwd = session.Str("/home/user/project")
				if err := f.srv.Engine.Store.Create(m); err != nil {
					b.Fatal(err)
				}
				err := f.srv.Engine.Store.Append(m.ID,
					message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hello")}},
					message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text("hi")}})
				if err != nil {
					b.Fatal(err)
				}
			}
			h := f.srv.Handler()
			serve := func() *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/sessions"+c.query, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				return rec
			}
			start := time.Now()
			serve() // the first call builds the index
			first := time.Since(start)
			for b.Loop() {
				serve()
			}
			// After the loop: b.Loop's timer reset drops earlier metrics.
			b.ReportMetric(float64(first.Milliseconds()), "first-ms")
		})
	}
}
