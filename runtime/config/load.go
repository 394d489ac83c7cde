package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// fileConfig is what the TOML decoder fills: the Config plus keys accepted
// only for compatibility.
type fileConfig struct {
	Config
	// Early Rust openheim configs put theme_color at the top level; accept it
	// so those files load without a warning. [tui] theme_color wins.
	LegacyThemeColor string `toml:"theme_color"`
}

// Load reads path ("" means DefaultPath()) and writes unknown-key warnings to
// os.Stderr. See LoadWith.
func Load(path string) (*Config, error) { return LoadWith(path, os.Stderr) }

// LoadWith reads, defaults and validates a config file, writing one line per
// unknown key to warn (nil discards them). A missing default file yields the
// defaults with no providers, so a fresh install can still run `openheim init`;
// a missing file that was asked for explicitly is an error.
func LoadWith(path string, warn io.Writer) (*Config, error) {
	if warn == nil {
		warn = io.Discard
	}
	explicit := path != ""
	if explicit {
		path = expandTilde(path)
	} else {
		path = DefaultPath()
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		c := &Config{}
		c.setDefaults()
		if err := c.validate(nil); err != nil {
			return nil, err
		}
		return c, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config: %s does not exist", path)
	case err != nil:
		return nil, fmt.Errorf("config: %w", err)
	}

	var raw fileConfig
	raw.setDefaults()
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, &fileError{path: path, err: err}
	}
	warnUndecoded(warn, path, md.Undecoded())

	c := &raw.Config
	if c.TUI.ThemeColor == "" {
		c.TUI.ThemeColor = raw.LegacyThemeColor
	}
	c.path = path
	c.dir = filepath.Dir(path)
	if err := c.validate(&md); err != nil {
		return nil, err
	}
	return c, nil
}

// fileError reports a TOML syntax or type error with the file and line, and
// keeps the toml error reachable through errors.As for callers that want
// ParseError.ErrorWithPosition.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	// The toml messages already carry "line N (last key ...)".
	return fmt.Sprintf("config: %s: %s", e.path, strings.TrimPrefix(e.err.Error(), "toml: "))
}

func (e *fileError) Unwrap() error { return e.err }

// warnUndecoded reports each unknown key once: an unknown table's own keys
// are not repeated, since the fix is to remove or rename the table.
func warnUndecoded(w io.Writer, path string, keys []toml.Key) {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		reported := false
		for i := 1; i < len(k); i++ {
			if seen[k[:i].String()] {
				reported = true
				break
			}
		}
		s := k.String()
		seen[s] = true
		if !reported {
			fmt.Fprintf(w, "openheim: warning: %s: unknown key %q\n", path, s)
		}
	}
}

// setDefaults fills top-level defaults before decoding so that keys absent
// from the file keep them while explicit values (even invalid ones such as
// max_iterations = 0) are seen and rejected by validate.
func (c *Config) setDefaults() {
	c.MaxIterations = DefaultMaxIterations
	c.Memory.TopK = DefaultTopK
	c.MaxAnswerBytes = DefaultMaxAnswerBytes
	c.MaxRetryWaitSecs = DefaultMaxRetryWaitSecs
}

// validate applies the defaults that depend on other keys and checks every
// value, failing on the first problem in a stable order (file order is not
// available for maps, so providers and servers go by name).
func (c *Config) validate(md *toml.MetaData) error {
	isSet := func(key ...string) bool { return md != nil && md.IsDefined(key...) }

	if c.MaxIterations < 1 {
		return keyErr("max_iterations", "must be at least 1 (got %d)", c.MaxIterations)
	}
	wd, err := resolveWorkDir(c.WorkDir)
	if err != nil {
		return err
	}
	c.WorkDir = wd
	if c.RecordDir != "" {
		c.RecordDir = resolveAgainst(c.Dir(), c.RecordDir)
	}
	if c.DataDir != "" {
		c.DataDir = resolveAgainst(c.Dir(), c.DataDir)
	}

	if c.Providers == nil {
		c.Providers = map[string]*Provider{}
	}
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		if p == nil {
			p = &Provider{}
			c.Providers[name] = p
		}
		if err := p.normalize(name, c.Dir(), isSet); err != nil {
			return err
		}
	}
	if err := c.validateLimits(isSet); err != nil {
		return err
	}
	if err := c.pickDefaultProvider(); err != nil {
		return err
	}

	if c.MCPServers == nil {
		c.MCPServers = map[string]*MCPServer{}
	}
	for _, name := range sortedKeys(c.MCPServers) {
		s := c.MCPServers[name]
		if s == nil {
			s = &MCPServer{}
			c.MCPServers[name] = s
		}
		if err := s.normalize(name, c.Dir(), isSet); err != nil {
			return err
		}
	}

	if err := c.validateACPAgents(); err != nil {
		return err
	}
	if err := c.validateMemory(); err != nil {
		return err
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	if err := c.validateServe(); err != nil {
		return err
	}
	if err := c.validatePrices(); err != nil {
		return err
	}
	return c.validatePermissions()
}

// pickDefaultProvider chooses a provider only when the choice is obvious;
// guessing among several would silently send prompts (and bills) to the
// wrong vendor.
func (c *Config) pickDefaultProvider() error {
	if len(c.Providers) == 0 {
		// Nothing to choose from; Resolve explains how to add a provider.
		return nil
	}
	names := sortedKeys(c.Providers)
	if c.DefaultProvider == "" {
		switch {
		case len(names) == 1:
			c.DefaultProvider = names[0]
		case c.Providers[KindOpenAI] != nil:
			c.DefaultProvider = KindOpenAI
		default:
			return keyErr("default_provider", "not set and %d providers are configured (%s); set it to one of them",
				len(names), strings.Join(names, ", "))
		}
		return nil
	}
	if c.Providers[c.DefaultProvider] == nil {
		return keyErr("default_provider", "%q is not a configured provider (configured: %s)",
			c.DefaultProvider, strings.Join(names, ", "))
	}
	return nil
}

func (c *Config) validateMemory() error {
	m := &c.Memory
	if m.TopK < 1 || m.TopK > MaxTopK {
		return keyErr("memory.top_k", "must be between 1 and %d (got %d)", MaxTopK, m.TopK)
	}
	if m.EmbeddingProvider == "" {
		if m.EmbeddingModel != "" {
			return keyErr("memory.embedding_model", "set but memory.embedding_provider is not")
		}
		return nil
	}
	p := c.Providers[m.EmbeddingProvider]
	if p == nil {
		return keyErr("memory.embedding_provider", "%q is not a configured provider (configured: %s)",
			m.EmbeddingProvider, strings.Join(sortedKeys(c.Providers), ", "))
	}
	if p.Kind == KindAnthropic {
		return keyErr("memory.embedding_provider", "provider %q is of kind anthropic, which has no embeddings API", p.Name)
	}
	if m.EmbeddingModel == "" {
		return keyErr("memory.embedding_model", "required when memory.embedding_provider is set")
	}
	return nil
}

// validateServe checks origins now rather than letting a typo silently block
// every browser request later, and makes roots absolute (relative to this
// file, like the file's other paths).
func (c *Config) validateServe() error {
	for _, o := range c.Serve.AllowedOrigins {
		if o == "*" {
			continue
		}
		if !isOrigin(o) {
			return keyErr("serve.allowed_origins", "%q is not an origin (want \"*\" or scheme://host[:port], e.g. http://localhost:5173)", o)
		}
	}
	for i, r := range c.Serve.Roots {
		if strings.TrimSpace(r) == "" {
			return keyErr("serve.roots", "entry %d is empty (want a directory, e.g. \"~/code\")", i+1)
		}
		c.Serve.Roots[i] = resolveAgainst(c.Dir(), r)
	}
	return nil
}
