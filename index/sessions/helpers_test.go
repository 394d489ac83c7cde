package sessions

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// holdEnv switches the test binary into a helper process that opens the
// index named by the variable ("rw:DIR" or "ro:DIR"), says "ready", and
// holds it until its stdin closes: a real second process for lock tests.
const holdEnv = "OPENHEIM_SESSIONS_TEST_HOLD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(holdEnv); spec != "" {
		os.Exit(hold(spec))
	}
	code := m.Run()
	removeBenchIndex()
	os.Exit(code)
}

func hold(spec string) int {
	mode, dir, _ := strings.Cut(spec, ":")
	x, err := Open(dir, Options{ReadOnly: mode == "ro"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // returns at EOF
	if err := x.Close(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// holder is a helper process holding an index; release lets it close.
type holder struct {
	cmd     *exec.Cmd
	release func()
}

func startHolder(t *testing.T, mode, dir string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+mode+":"+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("holder %s: %q", mode, line)
	}
	h := &holder{cmd: cmd}
	var once sync.Once
	h.release = func() {
		once.Do(func() {
			_ = stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("holder %s exit: %v", mode, err)
			}
		})
	}
	t.Cleanup(h.release)
	return h
}

func openT(t *testing.T, dir string, opts Options) *Index {
	t.Helper()
	x, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s, %+v): %v", dir, opts, err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func newIndex(t *testing.T) (*Index, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions")
	return openT(t, dir, Options{}), dir
}

// base is a fixed instant with a sub-second part, to catch any rounding.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

func sess(id string, minutes int) Session {
	return Session{
		ID: id, Title: "title of " + id, Model: "gpt-x", Provider: "openai", Cwd: "/work/a",
		CreatedAt: at(minutes - 1), UpdatedAt: at(minutes), Messages: 2,
	}
}

func ids(ss []Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func hitIDs(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s#%d", h.SessionID, h.Message)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mkdir(dir string) error { return os.MkdirAll(dir, 0o700) }

func itoa(i int) string { return fmt.Sprint(i) }
