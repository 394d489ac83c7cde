package engine

import (
	"github.com/openheim/openheim/runtime/skills"
)

// Skills lists the skills that can be activated (skills/<name>.md).
func (e *Engine) Skills() ([]string, error) { return skills.List(e.Config.SkillsDir()) }

// sessionSkills picks a turn's skills: the request's when it names any
// (nil keeps what the session has), a new session's defaults otherwise.
func (e *Engine) sessionSkills(req []string, isNew bool, stored []string) []string {
	switch {
	case req != nil:
		return req
	case isNew:
		return e.Config.DefaultSkills
	}
	return stored
}

// system assembles the turn's system message from the identity (system.md,
// unless given) and the skills; an unknown skill is a usage error naming
// the available.
func (e *Engine) system(workDir, identity string, names []string) (string, error) {
	if identity == "" {
		var err error
		if identity, err = e.Config.SystemPrompt(); err != nil {
			return "", err
		}
	}
	active, err := skills.Load(e.Config.SkillsDir(), names)
	if err != nil {
		return "", &UsageError{err}
	}
	return skills.System(workDir, identity, active), nil
}
