package host

import (
	"os"
	"path/filepath"
	"strings"
)

// materialize writes the projection's files into a private directory and
// puts their paths into args ("{{file:NAME}}").
func (h *Host) materialize(args []string) ([]string, error) {
	files := h.opts.Projection.Files
	if len(files) == 0 {
		return args, nil
	}
	dir, err := os.MkdirTemp("", "openheim-acp-")
	if err != nil {
		return nil, err
	}
	h.filesDir = dir
	out := append([]string{}, args...)
	for name, content := range files {
		path := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			h.removeFiles()
			return nil, err
		}
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], "{{file:"+name+"}}", path)
		}
	}
	return out, nil
}

// removeFiles removes what materialize wrote.
func (h *Host) removeFiles() {
	if h.filesDir != "" {
		os.RemoveAll(h.filesDir)
	}
}
