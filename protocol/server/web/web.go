// Package web is the built-in web client of `openheim serve`, embedded in
// the binary: plain JavaScript modules, CSS and one page, served at `/`.
// It talks only to the documented API (REST /api/* and the /ws envelope).
package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var embedded embed.FS

// Files are the client's files, index.html at the root.
func Files() fs.FS {
	sub, err := fs.Sub(embedded, "static")
	if err != nil {
		panic(err) // the folder is embedded: it exists
	}
	return sub
}

// csp keeps the page to its own scripts, styles and API; images may be
// data: or blob: (attachments, thumbnails).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the files; "/" is index.html. Anything else is a JSON
// 404, as the rest of the server answers.
func Handler() http.Handler {
	files := Files()
	fileServer := http.FileServer(http.FS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsAsset(r) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "not found"})
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// The client changes with the binary: revalidate every time.
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}

// IsAsset reports whether r asks for a file of the client: those are
// served without the token, so the page can load and ask for it.
func IsAsset(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := path.Clean(r.URL.Path)
	if p == "/" {
		return true
	}
	name := strings.TrimPrefix(p, "/")
	if strings.HasPrefix(name, "api/") || strings.HasPrefix(name, "v1/") {
		return false
	}
	fi, err := fs.Stat(Files(), name)
	return err == nil && !fi.IsDir()
}
