package history

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTheRuntimeImportsTheIndex: no package above the runtime
// (protocol/, commands/, cmd/), tests included, imports index/...: the
// index is derived data behind runtime/history, which hands out its own
// types.
func TestOnlyTheRuntimeImportsTheIndex(t *testing.T) {
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(mod))
	format := `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`
	out, err := exec.Command("go", "list", "-f", format, root+"/protocol/...", root+"/commands/...", root+"/cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list found only %d packages above the runtime: %q", len(lines), out)
	}
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, root+"/index/") {
				t.Errorf("%s imports %s: use runtime/history instead", pkg, imp)
			}
		}
	}
}
