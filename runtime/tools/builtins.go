package tools

// Options configures the built-in tools.
type Options struct {
	// WorkDir confines every file tool and is the shell's working
	// directory; empty means the current directory.
	WorkDir string
	// AllowShell offers execute_command. It is off by default because a
	// shell escapes the file sandbox entirely.
	AllowShell bool
	// FS serves file contents to read_file, write_file and edit_file, for
	// instance an ACP editor's fs/read_text_file and fs/write_text_file.
	// Nil means the local disk (DiskFS). Paths are checked by the sandbox
	// on the local disk first; list_dir and search always read the disk.
	FS FS
}

// Builtins returns a registry with the built-in tools for opts.
func Builtins(opts Options) (*Registry, error) {
	sb, err := NewSandbox(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	r := NewRegistry(
		&ReadFile{Sandbox: sb, FS: opts.FS},
		&WriteFile{Sandbox: sb, FS: opts.FS},
		&EditFile{Sandbox: sb, FS: opts.FS},
		&ListDir{Sandbox: sb},
		&Search{Sandbox: sb},
		&WebFetch{},
	)
	if opts.AllowShell {
		r.Add(&ExecuteCommand{Sandbox: sb})
	}
	return r, nil
}
