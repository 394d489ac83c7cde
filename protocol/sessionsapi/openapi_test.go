package sessionsapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes: every route is described, and nothing else.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var described []string
	for path, ops := range doc.Paths {
		for method := range ops {
			described = append(described, strings.ToUpper(method)+" "+path)
		}
	}
	a := &API{opts: Options{MaxBundleBytes: 1, MaxFileBytes: 1}}
	served := a.Patterns()
	slices.Sort(described)
	slices.Sort(served)
	if !slices.Equal(described, served) {
		t.Errorf("openapi.json and the routes differ:\n described %v\n served    %v", described, served)
	}
}

// TestOpenAPIEventTypes: the event types POST .../events takes are those
// the spec names, and every stream event the package can send (each
// "session.*" and "response.*" string in its sources, object names of
// files and deletions aside) is in the spec's ServerStreamEvent.
func TestOpenAPIEventTypes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties struct {
					Type struct {
						Enum []string `json:"enum"`
					} `json:"type"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	inputs := doc.Components.Schemas["SessionEvent"].Properties.Type.Enum
	var handled []string
	for typ := range eventHandlers {
		handled = append(handled, typ)
	}
	slices.Sort(inputs)
	slices.Sort(handled)
	if !slices.Equal(inputs, handled) {
		t.Errorf("event types: spec %v, handled %v", inputs, handled)
	}
	outputs := doc.Components.Schemas["ServerStreamEvent"].Properties.Type.Enum
	for _, name := range streamEventNames(t) {
		if !slices.Contains(outputs, name) {
			t.Errorf("the stream sends %s, which openapi.json does not name", name)
		}
	}
}

// streamEventNames are the string constants of the package's sources that
// name stream events.
func streamEventNames(t *testing.T) []string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		ast.Inspect(p, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && (strings.HasPrefix(s, "session.") || strings.HasPrefix(s, "response.")) &&
				!strings.HasPrefix(s, "session.resource") && !strings.HasSuffix(s, ".deleted") && !strings.ContainsAny(s, " {}") {
				seen[s] = true
			}
			return true
		})
	}
	names := slices.Sorted(maps.Keys(seen))
	if len(names) < 20 {
		t.Fatalf("found only %v", names)
	}
	return names
}
