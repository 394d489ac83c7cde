package sessionsapi

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openheim/openheim/runtime/tools"
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
	bundleConfigKeys = "name, description, model, provider, instructions, skills, tools, max_iterations"
	// A bundle is a config and a few small files; these bound what a
	// hostile one (a zip bomb, a million empty entries) costs to walk.
	bundleMaxEntries   = 1000
	bundleUnpackFactor = 8
	bundleMaxConfig    = 1 << 20
	// bundleFormSlack is the request body beyond the bundle itself:
	// multipart boundaries and part headers.
	bundleFormSlack = 64 << 10
)

var agentNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// readBundle reads the uploaded bundle, at most max bytes of it. The bundle
// is kept whole in memory: it is small, it is checked before anything
// touches the disk, and it is stored as uploaded.
func readBundle(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, readError("reading the bundle", err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge("bundle is over %d bytes", max)
	}
	return data, nil
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

// bundleConfigFile walks every entry of the gzipped tar in data, in memory,
// and returns config.yaml's bytes: from the archive's root, or from inside
// its only top-level directory (what `tar czf agent.tar.gz agent/` makes).
// Nothing is extracted, but the bundle is stored and may be unpacked
// elsewhere later, so whatever could escape a directory or name something
// other than a plain file is refused here.
func bundleConfigFile(data []byte, maxUnpacked int64) ([]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, badRequest("bundle is not a gzip file (want a .tar.gz): %v", err)
	}
	cr := &capReader{r: gz, left: maxUnpacked}
	fail := func(what string, err error) error {
		if cr.over || errors.Is(err, errUnpackedTooBig) {
			return badRequest("bundle unpacks to over %d bytes", maxUnpacked)
		}
		return badRequest("%s: %v", what, err)
	}
	tr := tar.NewReader(cr)
	configs := map[string][]byte{} // by the directory holding config.yaml ("" = root)
	top := map[string]bool{}
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail("corrupt tar", err)
		}
		if entries == bundleMaxEntries {
			return nil, badRequest("bundle has more than %d entries", bundleMaxEntries)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // pax metadata (git archive writes one), not a file
		}
		name, err := bundleEntryName(hdr.Name)
		if err != nil {
			return nil, err
		}
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, badRequest("bundle entry %q: links are not allowed", hdr.Name)
		default:
			return nil, badRequest("bundle entry %q: only files and directories are allowed (type %q)", hdr.Name, hdr.Typeflag)
		}
		if hdr.Size > cr.left {
			return nil, badRequest("bundle unpacks to over %d bytes", maxUnpacked)
		}
		if name == "." {
			continue
		}
		first, rest, _ := strings.Cut(name, "/")
		top[first] = true
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
			// Read, not skipped: the cap counts what is decompressed.
			if _, err := io.Copy(io.Discard, tr); err != nil {
				return nil, fail("corrupt tar", err)
			}
			continue
		}
		if _, dup := configs[dir]; dup {
			return nil, badRequest("bundle holds %s twice", path.Join(dir, "config.yaml"))
		}
		b, err := io.ReadAll(io.LimitReader(tr, bundleMaxConfig+1))
		if err != nil {
			return nil, fail("corrupt tar", err)
		}
		if len(b) > bundleMaxConfig {
			return nil, badRequest("config.yaml is over %d bytes", bundleMaxConfig)
		}
		configs[dir] = b
	}
	// The tar ends before the gzip stream does; reading on checks the
	// gzip checksum, so a damaged upload is not stored as if it were fine.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return nil, fail("corrupt gzip", err)
	}
	if b, ok := configs[""]; ok {
		return b, nil
	}
	if len(top) == 1 {
		for dir := range top {
			if b, ok := configs[dir]; ok {
				return b, nil
			}
		}
	}
	return nil, badRequest("bundle has no config.yaml: put it at the archive's root or inside its only top-level directory")
}

// bundleEntryName cleans a tar entry's name ("./a/b/" -> "a/b"), refusing
// absolute names and ".." elements. Backslashes count as separators: the
// archive may be unpacked on Windows.
func bundleEntryName(raw string) (string, error) {
	n := strings.ReplaceAll(raw, `\`, "/")
	if n == "" {
		return "", badRequest("bundle has an entry without a name")
	}
	if strings.HasPrefix(n, "/") || len(n) >= 2 && n[1] == ':' {
		return "", badRequest("bundle entry %q: path traversal (absolute path)", raw)
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "", badRequest("bundle entry %q: path traversal (a .. element)", raw)
		}
	}
	return path.Clean(n), nil
}

// parseBundleConfig reads config.yaml strictly: a misspelt key is an error,
// not a silently ignored setting.
func parseBundleConfig(b []byte) (Agent, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c bundleConfig
	if err := dec.Decode(&c); err != nil {
		if err == io.EOF {
			return Agent{}, badRequest("config.yaml is empty: it needs at least a name")
		}
		return Agent{}, badRequest("config.yaml: %s", yamlMessage(err))
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		return Agent{}, badRequest("config.yaml must hold one YAML document")
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		return Agent{}, badRequest("config.yaml: name is missing or empty")
	case !agentNamePattern.MatchString(c.Name):
		return Agent{}, badRequest("config.yaml: name %q must match %s (a letter or digit, then letters, digits, '_', '.' or '-'; 64 at most)", c.Name, agentNamePattern)
	case c.MaxIterations < 0:
		return Agent{}, badRequest("config.yaml: max_iterations must be 0 (the default cap) or more, not %d", c.MaxIterations)
	}
	for key, list := range map[string][]string{"skills": c.Skills, "tools": c.Tools} {
		for i, s := range list {
			if strings.TrimSpace(s) == "" {
				return Agent{}, badRequest("config.yaml: %s[%d] is empty", key, i)
			}
		}
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

// yamlMessage rewords yaml.v3's errors, which name the Go type, for the
// author of config.yaml.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, " in type sessionsapi.bundleConfig", "")
	msg = strings.ReplaceAll(msg, "sessionsapi.bundleConfig", "a mapping of keys")
	msg = strings.Join(strings.Fields(msg), " ")
	if strings.Contains(msg, "not found") {
		msg += fmt.Sprintf(" (known keys: %s)", bundleConfigKeys)
	}
	return msg
}

func readAgentFile(path string) (Agent, error) {
	var ag Agent
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &ag)
	}
	if ag.Skills == nil {
		ag.Skills = []string{}
	}
	ag.Object, ag.Source = "agent", "bundle"
	return ag, err
}

func newAgentID() string {
	b := make([]byte, agentIDHex/2)
	rand.Read(b)
	return "ag_" + hex.EncodeToString(b)
}

// write stores the agent under dir/<id>/, agent.json last: a directory
// without it is an upload that did not finish.
func (s *agentStore) write(ag Agent, bundle []byte) (err error) {
	d := filepath.Join(s.dir, ag.ID)
	if err := os.Mkdir(d, 0o700); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(d)
		}
	}()
	meta, err := json.MarshalIndent(ag, "", "  ")
	if err != nil {
		return err
	}
	if err := tools.WriteFileAtomic(filepath.Join(d, agentBundleFile), bundle); err != nil {
		return err
	}
	if err := tools.WriteFileAtomic(filepath.Join(d, agentFile), meta); err != nil {
		return err
	}
	// The renames are durable only once the directories are synced.
	syncDir(d)
	syncDir(s.dir)
	return nil
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
