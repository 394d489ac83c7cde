package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// ErrNoProviders is returned (wrapped) by Resolve when the config has no
// providers at all, so callers can offer `openheim init`.
var ErrNoProviders = errors.New("no providers configured")

// Resolved is the provider, model and key one run will use.
type Resolved struct {
	ProviderName string
	Provider     *Provider
	Model        string
	// APIKey may be empty: local OpenAI-compatible servers often need none,
	// and the provider reports a missing key better than config can.
	APIKey string
}

// Resolve picks the provider and model for a run. Empty arguments mean the
// configured defaults; explicit ones (from flags) are checked against the
// config so a typo fails before any request is made.
func (c *Config) Resolve(provider, model string) (*Resolved, error) {
	if len(c.Providers) == 0 {
		where := c.path
		if where == "" {
			where = DefaultPath()
		}
		return nil, fmt.Errorf("%w in %s; run `openheim init` to create a starter config, then edit it", ErrNoProviders, where)
	}
	names := sortedKeys(c.Providers)
	name := provider
	if name == "" {
		name = c.DefaultProvider
		if name == "" {
			return nil, fmt.Errorf("no provider given and default_provider is not set (configured: %s)", strings.Join(names, ", "))
		}
	}
	p := c.Providers[name]
	if p == nil {
		return nil, fmt.Errorf("provider %q is not configured (configured: %s)", name, strings.Join(names, ", "))
	}
	if model == "" {
		model = p.DefaultModel
	}
	if model == "" {
		return nil, fmt.Errorf("provider %q has no default_model; pass a model", name)
	}
	if len(p.Models) > 0 && !slices.Contains(p.Models, model) {
		return nil, fmt.Errorf("model %q is not offered by provider %q (models: %s)", model, name, strings.Join(p.Models, ", "))
	}
	return &Resolved{ProviderName: name, Provider: p, Model: model, APIKey: c.apiKey(p)}, nil
}

// apiKey prefers the key written in the file: it is the more specific
// instruction, while env_var is usually a kind-wide default.
func (c *Config) apiKey(p *Provider) string {
	if p.APIKey != "" {
		return p.APIKey
	}
	if p.EnvVar == "" {
		return ""
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return strings.TrimSpace(getenv(p.EnvVar))
}

// ModelsInfo is the body of GET /api/models (seed 000).
type ModelsInfo struct {
	DefaultProvider string                    `json:"default_provider"`
	Providers       map[string]ProviderModels `json:"providers"`
}

// ProviderModels is one provider's entry in ModelsInfo.
type ProviderModels struct {
	DefaultModel string   `json:"default_model"`
	Models       []string `json:"models"`
}

// Models lists the providers and their models; it carries no secrets.
func (c *Config) Models() ModelsInfo {
	info := ModelsInfo{DefaultProvider: c.DefaultProvider, Providers: make(map[string]ProviderModels, len(c.Providers))}
	for name, p := range c.Providers {
		if p == nil {
			continue
		}
		info.Providers[name] = ProviderModels{DefaultModel: p.DefaultModel, Models: nonNil(p.Models)}
	}
	return info
}

// nonNil copies s so callers cannot mutate the config through the result,
// and so JSON shows [] rather than null.
func nonNil(s []string) []string {
	out := make([]string, len(s))
	copy(out, s)
	return out
}

// ResolveRef reads a model reference as users and clients write it:
// "provider/model", or a bare model of the default provider, or of the first
// provider (by name) that lists it.
func (c *Config) ResolveRef(ref string) (*Resolved, error) {
	if p, m, ok := strings.Cut(ref, "/"); ok {
		if _, exists := c.Providers[p]; exists {
			return c.Resolve(p, m)
		}
	}
	r, err := c.Resolve("", ref)
	if err == nil {
		return r, nil
	}
	for _, name := range sortedKeys(c.Providers) {
		if p := c.Providers[name]; p != nil && slices.Contains(p.Models, ref) {
			return c.Resolve(name, ref)
		}
	}
	return nil, err
}

// ModelRefs lists every configured model as "provider/model", sorted; a
// provider without a models list offers its default_model.
func (c *Config) ModelRefs() []string {
	var refs []string
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		if p == nil {
			continue
		}
		models := p.Models
		if len(models) == 0 && p.DefaultModel != "" {
			models = []string{p.DefaultModel}
		}
		for _, m := range models {
			refs = append(refs, name+"/"+m)
		}
	}
	return refs
}
