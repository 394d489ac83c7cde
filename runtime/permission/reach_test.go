package permission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes root/{a/f, in/} and outside/{secret, sub/}, with symlinks
// root/out -> outside, root/rel -> ../outside, root/deep -> outside/sub,
// root/in/up -> root/a, root/dangling -> outside/new and root/loop ->
// root/loop; it returns root and outside (their real paths).
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "in"), filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "a", "f"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	for link, target := range map[string]string{
		"out":      outside,
		"in/up":    filepath.Join(root, "a"),
		"dangling": filepath.Join(outside, "new"),
		"loop":     filepath.Join(root, "loop"),
		"rel":      "../outside",
		"deep":     filepath.Join(outside, "sub"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestWithin(t *testing.T) {
	root, outside := tree(t)
	viaLink := filepath.Join(t.TempDir(), "work")
	os.Symlink(root, viaLink)
	tests := []struct {
		root, p string
		want    bool
	}{
		{root, root, true},
		{root, root + "/", true},
		{root, filepath.Join(root, "a", "f"), true},
		{root, filepath.Join(root, "a", "missing", "deeper"), true},
		{root, root + "/a/../a/f", true},
		{root, root + "/in/up/f", true}, // a link that stays inside
		{root, root + "/../outside/secret", false},
		{root, root + "x/f", false}, // a sibling sharing the prefix
		{root, filepath.Join(outside, "secret"), false},
		{root, "/etc/hostname", false},
		{root, root + "/out/secret", false},     // a link that leads out
		{root, root + "/out", false},            // the link itself leads out
		{root, root + "/rel/secret", false},     // a relative link that leads out
		{root, root + "/dangling", false},       // writing it would create outside/new
		{root, root + "/out/../root/a", true},   // ".." after a link is taken where the link leads
		{root, root + "/in/up/../f", true},      // in/up is root/a: its ".." is root
		{root, root + "/deep/../secret", false}, // lexically root/secret; really outside/secret
		{root, root + "/loop/x", false},
		{root, "a/f", false}, // relative
		{root, root + "/a\x00b", false},
		{viaLink, filepath.Join(root, "a", "f"), true}, // work_dir reached through a symlink
		{viaLink, viaLink + "/a/f", true},
		{viaLink, filepath.Join(outside, "secret"), false},
		{"/", "/etc/hostname", true},
	}
	for _, tt := range tests {
		if got := Within(tt.root, tt.p); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.root, tt.p, got, tt.want)
		}
	}
}

func TestDecideReach(t *testing.T) {
	root, outside := tree(t)
	in, out := filepath.Join(root, "a", "f"), filepath.Join(outside, "secret")
	allowOut := Rules{AllowOutside: []string{outside + "/**"}}
	tests := []struct {
		name       string
		rules      Rules
		tool, kind string
		x          Reach
		want       Decision
		why        string // a fragment of the reason, "" for none
	}{
		{"inside read", Rules{}, "read", "read", Reach{Root: root, Paths: []string{in}}, Allow, ""},
		{"inside edit asks", Rules{}, "edit", "edit", Reach{Root: root, Paths: []string{in}}, Ask, ""},
		{"outside read refused", Rules{}, "read", "read", Reach{Root: root, Paths: []string{in, out}}, Deny, "outside the work directory"},
		{"outside, even when allowed by name", Rules{Allow: []string{"*"}}, "read", "read", Reach{Root: root, Paths: []string{out}}, Deny, "outside"},
		{"outside through a link", Rules{}, "read", "read", Reach{Root: root, Paths: []string{root + "/out/secret"}}, Deny, "(" + out + ")"},
		{"allow_outside", allowOut, "read", "read", Reach{Root: root, Paths: []string{out}}, Allow, ""},
		{"allow_outside, through a link inside", allowOut, "read", "read", Reach{Root: root, Paths: []string{root + "/out/secret"}}, Allow, ""},
		{"allow_outside does not name it", allowOut, "read", "read", Reach{Root: root, Paths: []string{"/etc/hostname"}}, Deny, "allow_outside"},
		{"allow_outside, deny rule still wins", Rules{AllowOutside: []string{"/**"}, Deny: []string{"read"}}, "read", "read", Reach{Root: root, Paths: []string{out}}, Deny, ""},
		{"relative path cannot be judged", Rules{}, "read", "read", Reach{Root: root, Paths: []string{"a/f"}}, Deny, "cannot be judged"},
		{"no root: every path is outside", Rules{}, "read", "read", Reach{Paths: []string{in}}, Deny, "outside"},
		{"command labelled search, no shell", Rules{}, "search", "search", Reach{Root: root, Command: "/bin/bash -lc ls"}, Deny, "allow_shell is off"},
		{"command, shell on: asked", Rules{}, "execute", "search", Reach{Root: root, Shell: true, Command: "ls"}, Ask, ""},
		{"command, shell on, deny execute", Rules{Deny: []string{"execute"}}, "execute", "search", Reach{Root: root, Shell: true, Command: "ls"}, Deny, ""},
		{"command, shell on, allow execute", Rules{Allow: []string{"execute"}}, "execute", "search", Reach{Root: root, Shell: true, Command: "ls"}, Allow, ""},
		{"command, no shell, explicit allow", Rules{Allow: []string{"execute"}}, "execute", "execute", Reach{Root: root, Command: "ls"}, Allow, ""},
		{"command, no shell, allow by default kind is not enough", Rules{Allow: []string{"search"}}, "search", "search", Reach{Root: root, Command: "ls"}, Deny, "allow_shell"},
		{"command with an outside cwd", Rules{Allow: []string{"execute"}}, "execute", "execute", Reach{Root: root, Shell: true, Command: "ls", Paths: []string{"/"}}, Deny, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := tt.rules.DecideReach(tt.tool, tt.kind, tt.x)
			if got != tt.want || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("= %v %q, want %v %q", got, why, tt.want, tt.why)
			}
		})
	}
}

// TestGateUsesReach: the gate judges by a reach given in the request or
// carried by the context; the kind becomes execute for a command, so
// "always" answers are keyed by the exact arguments.
func TestGateUsesReach(t *testing.T) {
	root, outside := tree(t)
	asked := 0
	g := NewGate(Rules{}, AskerFunc(func(_ context.Context, r Request) (Outcome, error) {
		asked++
		return AllowAlways, nil
	}))
	ctx := context.Background()
	out := Reach{Root: root, Paths: []string{filepath.Join(outside, "secret")}}
	if ok, _ := g.Check(ctx, Request{SessionID: "s", Tool: "read", Kind: "read", Reach: &out}); ok {
		t.Error("an outside read in the request was allowed")
	}
	if ok, _ := g.Check(WithReach(ctx, out), Request{SessionID: "s", Tool: "read", Kind: "read"}); ok {
		t.Error("an outside read in the context was allowed")
	}
	if ok, _ := g.Check(ctx, Request{SessionID: "s", Tool: "read", Kind: "read"}); !ok {
		t.Error("a read without reach was refused")
	}
	if asked != 0 {
		t.Errorf("asked %d times about reads", asked)
	}
	cmd := func(args string) Request {
		x := Reach{Root: root, Shell: true, Command: args}
		return Request{SessionID: "s", Tool: "execute", Kind: "search", Args: []byte(`{"command":"` + args + `"}`), Reach: &x}
	}
	for _, c := range []string{"ls", "ls", "rm -rf x"} {
		if ok, _ := g.Check(ctx, cmd(c)); !ok {
			t.Errorf("%s refused", c)
		}
	}
	if asked != 2 { // ls once (then remembered), rm once
		t.Errorf("asked %d times, want 2 (a command labelled search is keyed by its arguments)", asked)
	}
}

func TestValidateAllowOutside(t *testing.T) {
	if err := (Rules{AllowOutside: []string{"/tmp/**"}}).Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"tmp/**", "", "/tmp/["} {
		if err := (Rules{AllowOutside: []string{bad}}).Validate(); err == nil || !strings.Contains(err.Error(), "allow_outside") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
