package sessionsapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/skills"
)

// validateAgent checks an uploaded agent against the config: its model
// resolves, its skills exist and its tools are tools openheim has.
func (a *API) validateAgent(ag Agent) error {
	if ag.Model != "" {
		if _, err := a.resolve(ag.Provider, ag.Model); err != nil {
			return fmt.Errorf("model: %v", err)
		}
	} else if ag.Provider != "" {
		if _, err := a.opts.Engine.Config.Resolve(ag.Provider, ""); err != nil {
			return fmt.Errorf("provider: %v", err)
		}
	}
	if _, err := skills.Load(a.opts.Engine.Config.SkillsDir(), ag.Skills); err != nil {
		return fmt.Errorf("skills: %v", err)
	}
	if ag.Tools != nil {
		reg, err := a.opts.Engine.Tools(a.opts.Engine.Config.WorkDir, nil, false)
		if err != nil {
			return err
		}
		var known []string
		for _, t := range reg.Tools() {
			known = append(known, t.Spec().Name)
		}
		slices.Sort(known)
		for _, name := range ag.Tools {
			if !slices.Contains(known, name) {
				return fmt.Errorf("tools: no tool %q (tools: %s)", name, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// cancelAgent stops the running turns of the sessions bound to agent id
// (it is about to be deleted) and waits until they saved.
func (a *API) cancelAgent(id string) {
	sids, err := a.sessions.docs.Keys()
	if err != nil {
		return
	}
	for _, sid := range sids {
		s, err := a.sessions.settings(sid)
		if err != nil || s.AgentID != id {
			continue
		}
		if t := a.sessions.lookup(sid); t != nil {
			t.interrupt()
		}
		<-a.opts.Hub.Cancel(sid)
	}
}
