package main

import (
	"os/exec"
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
