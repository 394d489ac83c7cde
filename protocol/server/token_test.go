package server

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestLoadToken: the token is made once (0600, URL-safe, 256 bits), kept
// across calls (restarts), and replaced when the file is readable by
// others, a symlink or garbage.
func TestLoadToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home") // made on first use
	first, err := LoadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(first.Path)
	if err != nil || fi.Mode().Perm() != 0o600 || !first.New || first.Replaced != "" {
		t.Fatalf("first: %+v %v %v", first, fi.Mode(), err)
	}
	if len(first.Value) != 43 || !validToken(first.Value) {
		t.Errorf("token %q: want 43 URL-safe characters", first.Value)
	}
	again, err := LoadToken(dir)
	if err != nil || again.Value != first.Value || again.New {
		t.Errorf("again: %+v %v, want the same token kept", again, err)
	}

	os.Chmod(first.Path, 0o644)
	loose, err := LoadToken(dir)
	if err != nil || loose.Value == first.Value || !loose.New || loose.Replaced == "" {
		t.Errorf("a world-readable file: %+v %v, want a new token", loose, err)
	}
	if fi, _ := os.Stat(loose.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced with mode %v", fi.Mode())
	}

	other := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(other, []byte(first.Value+"\n"), 0o600)
	os.Remove(loose.Path)
	os.Symlink(other, loose.Path)
	linked, err := LoadToken(dir)
	if err != nil || linked.Value == first.Value || linked.Replaced == "" {
		t.Errorf("a symlink: %+v %v, want a new token", linked, err)
	}
	if fi, _ := os.Lstat(linked.Path); !fi.Mode().IsRegular() {
		t.Errorf("the symlink is still there: %v", fi.Mode())
	}

	os.WriteFile(linked.Path, []byte("short\n"), 0o600)
	if bad, err := LoadToken(dir); err != nil || bad.Value == "short" || bad.Replaced == "" {
		t.Errorf("garbage: %+v %v", bad, err)
	}
	mine := "my-own-token-0123456789abcdef"
	os.WriteFile(linked.Path, []byte(mine+"\n"), 0o600)
	if own, err := LoadToken(dir); err != nil || own.Value != mine || own.New {
		t.Errorf("a token written by hand: %+v %v", own, err)
	}
}

// TestLoadTokenRace: servers starting at once agree on one token.
func TestLoadTokenRace(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			st, err := LoadToken(dir)
			if err != nil {
				t.Error(err)
			}
			got[i] = st.Value
		})
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] {
			t.Fatalf("tokens differ: %v", got)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".serve_token-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}
