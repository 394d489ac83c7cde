package tools

// Options configures the built-in tools.
type Options struct {
	// WorkDir confines every file tool and is the shell's working
	// directory; empty means the current directory.
	WorkDir string
	// AllowShell offers execute_command. It is off by default because a
	// shell escapes the file sandbox entirely.
	AllowShell bool
}

// Builtins returns a registry with the built-in tools for opts.
func Builtins(opts Options) (*Registry, error) {
	sb, err := NewSandbox(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	r := NewRegistry(
		&ReadFile{Sandbox: sb},
		&WriteFile{Sandbox: sb},
		&EditFile{Sandbox: sb},
		&ListDir{Sandbox: sb},
		&Search{Sandbox: sb},
		&WebFetch{},
	)
	if opts.AllowShell {
		r.Add(&ExecuteCommand{Sandbox: sb})
	}
	return r, nil
}
