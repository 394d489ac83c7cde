package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestBinaryLinksNoNATSServer: nats-server (10.7 MiB, 1.5 ms of init)
// is a test-only dependency, run inside test processes; the binary links
// the client only.
func TestBinaryLinksNoNATSServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := string(out)
	if strings.Contains(deps, "github.com/nats-io/nats-server") {
		t.Fatal("the openheim binary links nats-server")
	}
	for _, forbidden := range []string{"/natstest", "/backendtest"} {
		if strings.Contains(deps, forbidden) {
			t.Fatalf("the openheim binary links a test helper (%s)", forbidden)
		}
	}
}

// TestStartupSkipsBleveAutomata: bleve's scorch package builds two
// Levenshtein automaton builders in its init (1 MB, 26,000 allocations,
// ~4 ms: a quarter of `openheim --version`), which only fuzzy queries use.
// third_party/vellum builds them on first use; this fails if that patch is
// lost (a dependency update dropping the replace) while upstream is eager.
func TestStartupSkipsBleveAutomata(t *testing.T) {
	cmd := exec.Command(binary(t), "--version")
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		// init PKG @T ms, T ms clock, BYTES bytes, N allocs
		if len(f) < 10 || f[0] != "init" || f[1] != "github.com/blevesearch/bleve/v2/index/scorch" {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read %q", line)
		}
		if bytes > 64<<10 {
			t.Fatalf("scorch's init allocates %d bytes: its automata are built at start-up again\n%s", bytes, line)
		}
		return
	}
	t.Fatalf("no init line for scorch in:\n%s", out)
}
