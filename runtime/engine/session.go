package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/openheim/openheim/runtime/session"
)

// NewSession stores a new, empty session working in cwd with the given
// provider and model ("" for the defaults) and skills (nil: the config's
// default_skills), for front ends that create a session before its first
// prompt (ACP session/new).
func (e *Engine) NewSession(cwd, provider, model string, skillNames []string) (session.Meta, error) {
	if !filepath.IsAbs(cwd) {
		return session.Meta{}, &UsageError{fmt.Errorf("cwd %q is not an absolute path", cwd)}
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return session.Meta{}, &UsageError{fmt.Errorf("cwd %q is not a directory", cwd)}
	}
	resolved, err := e.Config.Resolve(provider, model)
	if err != nil {
		return session.Meta{}, &UsageError{err}
	}
	names := e.sessionSkills(skillNames, true, nil)
	if _, err := e.system(cwd, "", names); err != nil {
		return session.Meta{}, err
	}
	meta := session.NewMeta(e.now())
	meta.Skills = append([]string{}, names...)
	meta.Cwd = session.Str(filepath.Clean(cwd))
	meta.Model, meta.Provider = session.Str(resolved.Model), session.Str(resolved.ProviderName)
	return meta, e.Store.Create(meta)
}
