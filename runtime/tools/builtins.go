package tools

import "github.com/openheim/openheim/runtime/confine"

// Options configures the built-in tools.
type Options struct {
	// WorkDir confines every file tool and is the shell's working
	// directory; empty means the current directory.
	WorkDir string
	// AllowShell offers execute_command. It is off by default because a
	// shell reaches past the work directory: no path check confines it.
	AllowShell bool
	// FS serves file contents to read_file, write_file and edit_file, for
	// instance an ACP editor's fs/read_text_file and fs/write_text_file.
	// Nil means the local disk, through the work directory's root. Paths
	// are checked through the root on the local disk first; list_dir and
	// search always read the disk.
	FS FS
}

// Builtins returns a registry with the built-in tools for opts.
func Builtins(opts Options) (*Registry, error) {
	// One handle for the registry's life; the garbage collector closes it
	// with the last tool that holds it.
	root, err := confine.Open(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	r := NewRegistry(
		&ReadFile{Root: root, FS: opts.FS},
		&WriteFile{Root: root, FS: opts.FS},
		&EditFile{Root: root, FS: opts.FS},
		&ListDir{Root: root},
		&Search{Root: root},
		&WebFetch{},
	)
	if opts.AllowShell {
		r.Add(&ExecuteCommand{Root: root})
	}
	return r, nil
}
