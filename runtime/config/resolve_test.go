package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const resolveTOML = `
default_provider = "openai"
[providers.openai]
models = ["a", "b"]
[providers.inline]
kind = "openai"
api_key = "inline-key"
default_model = "x"
[providers.ollama]
api_base = "http://localhost:11434/v1"
default_model = "llama"
[providers.custom]
api_base = "http://h"
default_model = "m"
env_var = "CUSTOM_KEY"
`

func TestResolve(t *testing.T) {
	c := loadString(t, resolveTOML)
	env := map[string]string{"OPENAI_API_KEY": "env-openai", "CUSTOM_KEY": " padded\n"}
	c.Getenv = func(k string) string { return env[k] }

	tests := []struct {
		name            string
		provider, model string
		wantProvider    string
		wantModel       string
		wantKey         string
		wantErr         string
	}{
		{name: "defaults", wantProvider: "openai", wantModel: "a", wantKey: "env-openai"},
		{name: "listed model", model: "b", wantProvider: "openai", wantModel: "b", wantKey: "env-openai"},
		{name: "unlisted model", model: "x", wantErr: `model "x" is not offered by provider "openai" (models: a, b)`},
		{name: "api_key beats env_var", provider: "inline", wantProvider: "inline", wantModel: "x", wantKey: "inline-key"},
		{name: "no models list accepts any", provider: "ollama", model: "qwen", wantProvider: "ollama", wantModel: "qwen", wantKey: ""},
		{name: "custom env var trimmed", provider: "custom", wantProvider: "custom", wantModel: "m", wantKey: "padded"},
		{name: "unknown provider", provider: "nope", wantErr: `provider "nope" is not configured (configured: custom, inline, ollama, openai)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.Resolve(tt.provider, tt.model)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.ProviderName != tt.wantProvider || r.Provider != c.Providers[tt.wantProvider] ||
				r.Model != tt.wantModel || r.APIKey != tt.wantKey {
				t.Errorf("got %+v, want provider %q model %q key %q", r, tt.wantProvider, tt.wantModel, tt.wantKey)
			}
		})
	}
}

func TestResolveUsesProcessEnvByDefault(t *testing.T) {
	c := loadString(t, "[providers.openai]\ndefault_model = \"m\"\n")
	t.Setenv("OPENAI_API_KEY", "from-process")
	r, err := c.Resolve("", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.APIKey != "from-process" {
		t.Errorf("APIKey = %q", r.APIKey)
	}
}

func TestResolveNoProviders(t *testing.T) {
	t.Setenv("OPENHEIM_HOME", t.TempDir())
	c, err := LoadWith("", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve("", "")
	if !errors.Is(err, ErrNoProviders) || !strings.Contains(err.Error(), "openheim init") ||
		!strings.Contains(err.Error(), DefaultPath()) {
		t.Errorf("err = %v", err)
	}
}

func TestModels(t *testing.T) {
	c := loadString(t, resolveTOML)
	b, err := json.Marshal(c.Models())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"default_provider":"openai","providers":{` +
		`"custom":{"default_model":"m","models":[]},` +
		`"inline":{"default_model":"x","models":[]},` +
		`"ollama":{"default_model":"llama","models":[]},` +
		`"openai":{"default_model":"a","models":["a","b"]}}}`
	if string(b) != want {
		t.Errorf("Models JSON:\n got %s\nwant %s", b, want)
	}
	if strings.Contains(string(b), "inline-key") {
		t.Error("Models leaks an api_key")
	}
}

func TestResolveRefAndModelRefs(t *testing.T) {
	c := loadString(t, `default_provider = "a"
[providers.a]
kind = "openai"
api_base = "http://127.0.0.1:1/v1"
default_model = "m1"
models = ["m1", "m2"]
[providers.b]
kind = "openai"
api_base = "http://127.0.0.1:2/v1"
default_model = "x"
[providers.c]
kind = "openai"
api_base = "http://127.0.0.1:3/v1"
default_model = "y"
models = ["y", "shared"]
`)
	for ref, want := range map[string]string{
		"m2": "a/m2", "a/m1": "a/m1", "b/x": "b/x", "shared": "c/shared", "c/y": "c/y",
	} {
		r, err := c.ResolveRef(ref)
		if err != nil {
			t.Errorf("ResolveRef(%q): %v", ref, err)
			continue
		}
		if got := r.ProviderName + "/" + r.Model; got != want {
			t.Errorf("ResolveRef(%q) = %s, want %s", ref, got, want)
		}
	}
	for _, bad := range []string{"nope", "a/nope", "zz/m1"} {
		if _, err := c.ResolveRef(bad); err == nil {
			t.Errorf("ResolveRef(%q) succeeded", bad)
		}
	}
	got := strings.Join(c.ModelRefs(), " ")
	if want := "a/m1 a/m2 b/x c/y c/shared"; got != want {
		t.Errorf("ModelRefs = %q, want %q", got, want)
	}
}
