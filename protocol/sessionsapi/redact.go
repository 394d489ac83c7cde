package sessionsapi

import (
	"net/http"

	"github.com/openheim/openheim/runtime/redact"
)

// redactErrors masks the config's secrets in the body of every error answer
// (status 400 and up) of h: a 500 quotes the error that caused it. Other
// answers pass untouched; stream events are masked where they are encoded
// (tracker.emit).
func redactErrors(h http.Handler, red *redact.Redactor) http.Handler {
	if red.Empty() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&errorRedactor{ResponseWriter: w, red: red}, r)
	})
}

type errorRedactor struct {
	http.ResponseWriter
	red    *redact.Redactor
	failed bool
}

func (w *errorRedactor) WriteHeader(code int) {
	if code >= 400 {
		w.failed = true
		w.Header().Del("Content-Length") // the masked body's length differs
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorRedactor) Write(p []byte) (int, error) {
	if !w.failed {
		return w.ResponseWriter.Write(p)
	}
	if _, err := w.ResponseWriter.Write(w.red.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *errorRedactor) Unwrap() http.ResponseWriter { return w.ResponseWriter }
