package sessionfiles

import (
	"mime"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/storeerr"
)

const maxFileName = 255

// cleanName keeps the last element of a client's file name, whichever
// separator the client's OS uses.
func cleanName(name string) (string, error) {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimSpace(name)
	switch {
	case name == "" || name == "." || name == "/" || name == "..":
		return "", storeerr.Invalid("the file part has no file name")
	case len(name) > maxFileName:
		return "", storeerr.Invalid("file name is over %d bytes", maxFileName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", storeerr.Invalid("file name %q has invalid characters", name)
	}
	return name, nil
}

// contentType prefers the client's declared type, then the content, then
// the extension: sniffing only knows a few formats and says text/plain for
// JSON, CSV, Markdown, which the extension names better.
func contentType(declared, name string, head []byte) string {
	if mt, params, err := mime.ParseMediaType(declared); err == nil && mt != "application/octet-stream" {
		return mime.FormatMediaType(mt, params)
	}
	sniffed := http.DetectContentType(head)
	generic := sniffed == "application/octet-stream" || strings.HasPrefix(sniffed, "text/plain")
	if ext := mime.TypeByExtension(filepath.Ext(name)); generic && ext != "" {
		return ext
	}
	return sniffed
}
