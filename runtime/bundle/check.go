package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/storeerr"
)

// bundleConfig is an agent bundle's config.yaml.
type bundleConfig struct {
	Name          string   `yaml:"name"`
	Description   string   `yaml:"description"`
	Model         string   `yaml:"model"`
	Provider      string   `yaml:"provider"`
	Instructions  string   `yaml:"instructions"`
	Skills        []string `yaml:"skills"`
	Tools         []string `yaml:"tools"`
	MaxIterations int      `yaml:"max_iterations"`
}

const (
	configKeys = "name, description, model, provider, instructions, skills, tools, max_iterations"
	// A bundle is a config and a few small files; these bound what a
	// hostile one (a zip bomb, a million empty entries) costs to walk.
	MaxEntries   = 1000
	UnpackFactor = 8 // a bundle of n bytes may unpack to UnpackFactor*n
	maxConfig    = 1 << 20
)

var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// New checks data, an uploaded bundle of at most maxBytes, and returns its
// agent, named (id) and dated now; it is not stored. The refusals are
// storeerr.ErrInvalid, saying what is wrong for the bundle's author.
func New(data []byte, maxBytes int64, now time.Time) (Agent, error) {
	if int64(len(data)) > maxBytes {
		return Agent{}, storeerr.TooLarge("bundle is over %d bytes", maxBytes)
	}
	cfg, err := configFile(data, UnpackFactor*maxBytes)
	if err != nil {
		return Agent{}, err
	}
	ag, err := parseConfig(cfg)
	if err != nil {
		return Agent{}, err
	}
	ag.ID, ag.CreatedAt = ids.New(IDPrefix), now.Unix()
	return ag, nil
}

// errUnpackedTooBig ends the decompression of an oversized bundle.
var errUnpackedTooBig = errors.New("bundle unpacks to too many bytes")

// capReader fails once more than left bytes were read: the tar headers'
// sizes are the uploader's claims, the decompressed stream is the fact.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Exactly at the cap is fine if the stream ends here.
		var b [1]byte
		n, err := c.r.Read(b[:])
		if n > 0 {
			c.over = true
			return 0, errUnpackedTooBig
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// walk is one pass over a bundle's entries.
type walk struct {
	cr      *capReader
	max     int64
	configs map[string][]byte // by the directory holding config.yaml ("" = root)
	top     map[string]bool   // the archive's top-level names
}

// fail words a read error: the cap's, or the archive's damage.
func (w *walk) fail(what string, err error) error {
	if w.cr.over || errors.Is(err, errUnpackedTooBig) {
		return storeerr.Invalid("bundle unpacks to over %d bytes", w.max)
	}
	return storeerr.Invalid("%s: %v", what, err)
}

// configFile walks every entry of the gzipped tar in data, in memory, and
// returns config.yaml's bytes: from the archive's root, or from inside its
// only top-level directory (what `tar czf agent.tar.gz agent/` makes).
// Nothing is extracted, but the bundle is stored and may be unpacked
// elsewhere later, so whatever could escape a directory or name something
// other than a plain file is refused here.
func configFile(data []byte, maxUnpacked int64) ([]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, storeerr.Invalid("bundle is not a gzip file (want a .tar.gz): %v", err)
	}
	w := &walk{cr: &capReader{r: gz, left: maxUnpacked}, max: maxUnpacked, configs: map[string][]byte{}, top: map[string]bool{}}
	tr := tar.NewReader(w.cr)
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, w.fail("corrupt tar", err)
		}
		if entries == MaxEntries {
			return nil, storeerr.Invalid("bundle has more than %d entries", MaxEntries)
		}
		if err := w.entry(hdr, tr); err != nil {
			return nil, err
		}
	}
	// The tar ends before the gzip stream does; reading on checks the
	// gzip checksum, so a damaged upload is not stored as if it were fine.
	if _, err := io.Copy(io.Discard, w.cr); err != nil {
		return nil, w.fail("corrupt gzip", err)
	}
	return w.config()
}

// entry checks one entry and reads it: config.yaml kept, the rest
// discarded (read, not skipped: the cap counts what is decompressed).
func (w *walk) entry(hdr *tar.Header, tr *tar.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil // pax metadata (git archive writes one), not a file
	}
	name, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeDir:
	case tar.TypeSymlink, tar.TypeLink:
		return storeerr.Invalid("bundle entry %q: links are not allowed", hdr.Name)
	default:
		return storeerr.Invalid("bundle entry %q: only files and directories are allowed (type %q)", hdr.Name, hdr.Typeflag)
	}
	if hdr.Size > w.cr.left {
		return storeerr.Invalid("bundle unpacks to over %d bytes", w.max)
	}
	if name == "." {
		return nil
	}
	first, rest, _ := strings.Cut(name, "/")
	w.top[first] = true
	dir, isConfig := "", false
	if hdr.Typeflag == tar.TypeReg {
		switch {
		case name == "config.yaml":
			isConfig = true
		case rest == "config.yaml":
			dir, isConfig = first, true
		}
	}
	if !isConfig {
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return w.fail("corrupt tar", err)
		}
		return nil
	}
	if _, dup := w.configs[dir]; dup {
		return storeerr.Invalid("bundle holds %s twice", path.Join(dir, "config.yaml"))
	}
	b, err := io.ReadAll(io.LimitReader(tr, maxConfig+1))
	if err != nil {
		return w.fail("corrupt tar", err)
	}
	if len(b) > maxConfig {
		return storeerr.Invalid("config.yaml is over %d bytes", maxConfig)
	}
	w.configs[dir] = b
	return nil
}

// config picks the config.yaml at the root, else the one in the only
// top-level directory.
func (w *walk) config() ([]byte, error) {
	if b, ok := w.configs[""]; ok {
		return b, nil
	}
	if len(w.top) == 1 {
		for dir := range w.top {
			if b, ok := w.configs[dir]; ok {
				return b, nil
			}
		}
	}
	return nil, storeerr.Invalid("bundle has no config.yaml: put it at the archive's root or inside its only top-level directory")
}

// entryName cleans a tar entry's name ("./a/b/" -> "a/b"), refusing
// absolute names and ".." elements. Backslashes count as separators: the
// archive may be unpacked on Windows.
func entryName(raw string) (string, error) {
	n := strings.ReplaceAll(raw, `\`, "/")
	if n == "" {
		return "", storeerr.Invalid("bundle has an entry without a name")
	}
	if strings.HasPrefix(n, "/") || len(n) >= 2 && n[1] == ':' {
		return "", storeerr.Invalid("bundle entry %q: path traversal (absolute path)", raw)
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "", storeerr.Invalid("bundle entry %q: path traversal (a .. element)", raw)
		}
	}
	return path.Clean(n), nil
}

// parseConfig reads config.yaml strictly: a misspelt key is an error, not
// a silently ignored setting.
func parseConfig(b []byte) (Agent, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c bundleConfig
	if err := dec.Decode(&c); err != nil {
		if err == io.EOF {
			return Agent{}, storeerr.Invalid("config.yaml is empty: it needs at least a name")
		}
		return Agent{}, storeerr.Invalid("config.yaml: %s", yamlMessage(err))
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		return Agent{}, storeerr.Invalid("config.yaml must hold one YAML document")
	}
	if err := c.check(); err != nil {
		return Agent{}, err
	}
	ag := Agent{
		Object: "agent", Name: c.Name, Description: c.Description, Model: c.Model, Provider: c.Provider,
		Instructions: strings.TrimSpace(c.Instructions), Skills: c.Skills, Tools: c.Tools,
		MaxIterations: c.MaxIterations, Source: "bundle",
	}
	if ag.Skills == nil {
		ag.Skills = []string{}
	}
	return ag, nil
}

func (c bundleConfig) check() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return storeerr.Invalid("config.yaml: name is missing or empty")
	case !namePattern().MatchString(c.Name):
		return storeerr.Invalid("config.yaml: name %q must match %s (a letter or digit, then letters, digits, '_', '.' or '-'; 64 at most)", c.Name, namePattern)
	case c.MaxIterations < 0:
		return storeerr.Invalid("config.yaml: max_iterations must be 0 (the default cap) or more, not %d", c.MaxIterations)
	}
	for key, list := range map[string][]string{"skills": c.Skills, "tools": c.Tools} {
		for i, s := range list {
			if strings.TrimSpace(s) == "" {
				return storeerr.Invalid("config.yaml: %s[%d] is empty", key, i)
			}
		}
	}
	return nil
}

// yamlMessage rewords yaml.v3's errors, which name the Go type, for the
// author of config.yaml.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, " in type bundle.bundleConfig", "")
	msg = strings.ReplaceAll(msg, "bundle.bundleConfig", "a mapping of keys")
	msg = strings.Join(strings.Fields(msg), " ")
	if strings.Contains(msg, "not found") {
		msg += fmt.Sprintf(" (known keys: %s)", configKeys)
	}
	return msg
}
