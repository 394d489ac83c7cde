package engine

import (
	"github.com/openheim/openheim/runtime/tools"
)

// readOnlyKinds are the tool kinds architect mode keeps: they look, they do
// not touch.
var readOnlyKinds = map[string]bool{tools.KindRead: true, tools.KindSearch: true, tools.KindThink: true}

// Tools returns the tools a turn offers in workDir: the built-ins (the shell
// only when allowed), reading and writing files through fs (nil: the disk),
// and with readOnly only those that change nothing.
func (e *Engine) Tools(workDir string, fs tools.FS, readOnly bool) (*tools.Registry, error) {
	reg, err := tools.Builtins(tools.Options{WorkDir: workDir, AllowShell: e.Config.AllowShell, FS: fs})
	if err != nil || !readOnly {
		return reg, err
	}
	var keep []tools.Tool
	for _, t := range reg.Tools() {
		if readOnlyKinds[t.Kind()] {
			keep = append(keep, t)
		}
	}
	return tools.NewRegistry(keep...), nil
}
