// Package bundletest builds agent bundles (.tar.gz) for tests, including
// hostile ones.
package bundletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
)

// Entry is one entry of a bundle: a tar header and its body.
type Entry struct {
	Hdr  tar.Header
	Body string
}

// File is a plain file entry.
func File(name, body string) Entry {
	return Entry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body}
}

// Dir is a directory entry.
func Dir(name string) Entry {
	return Entry{tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}, ""}
}

// TarGz is a bundle of the entries, as given (a header may lie about its
// size or type).
func TarGz(entries ...Entry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.Hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			panic(err)
		}
		tw.Write([]byte(e.Body))
	}
	tw.Close()
	return Gzip(buf.Bytes())
}

// Gzip compresses raw bytes.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Write(b)
	gz.Close()
	return buf.Bytes()
}

// Config is a bundle holding only config.yaml with cfg.
func Config(cfg string) []byte { return TarGz(File("config.yaml", cfg)) }
