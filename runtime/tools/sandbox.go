package tools

import "github.com/openheim/openheim/runtime/confine"

// Sandbox places the working directory of the commands the ACP host runs
// for an external agent (terminal/create). It is all that is left of the
// old path checker: every file operation goes through confine.Root, and a
// command is a process that no path check confines anyway. New code uses
// confine.Root.
type Sandbox struct {
	// Root is absolute and free of symlinks.
	Root string
	r    *confine.Root
}

// NewSandbox returns a sandbox rooted at dir, which must be a directory.
// An empty dir means the current directory.
func NewSandbox(dir string) (*Sandbox, error) {
	r, err := confine.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Sandbox{Root: r.Path(), r: r}, nil
}

// Resolve maps a path argument to the absolute path of what it names
// inside Root, links resolved through the root; one leading out is
// refused with the usual "outside the work directory" message.
func (s *Sandbox) Resolve(p string) (string, error) {
	name, err := s.r.Real(p)
	if err != nil {
		return "", err
	}
	return s.r.Abs(name), nil
}
