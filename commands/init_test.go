package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's configuration example names the models `openheim init`
// writes, so what a new user copies and what init gives them agree.
func TestREADMEModelsAreInitsModels(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, fakeConfig)
	if err := initRun(context.Background(), &InitOptions{IO: e.f.IOStreams, Home: func() string { return filepath.Join(e.home, "init") }}); err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(e.home, "init", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`"([^"]+)"`)
	models := regexp.MustCompile(`(?m)^(?:default_model|models) = (.*)$`)
	var names []string
	for _, m := range models.FindAllStringSubmatch(string(readme), -1) {
		for _, q := range quoted.FindAllStringSubmatch(strings.SplitN(m[1], "#", 2)[0], -1) {
			names = append(names, q[1])
		}
	}
	if len(names) == 0 {
		t.Fatal("no models found in the README's configuration example")
	}
	for _, n := range names {
		if !strings.Contains(string(tmpl), `"`+n+`"`) {
			t.Errorf("the README names model %q, which openheim init's config.toml does not", n)
		}
	}
}
