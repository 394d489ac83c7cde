package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBodyLimit(t *testing.T) {
	var got int
	h := BodyLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got = len(b)
	}), 10)
	for _, c := range []struct {
		body    string
		chunked bool
		want    int
	}{
		{"0123456789", false, http.StatusOK},
		{"0123456789x", false, http.StatusRequestEntityTooLarge},
		{"0123456789x", true, http.StatusBadRequest}, // the handler's read fails
	} {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(c.body))
		if c.chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%q chunked=%v: %d, want %d", c.body, c.chunked, w.Code, c.want)
		}
	}
	if got != 10 {
		t.Errorf("handler read %d bytes, want 10", got)
	}
}
