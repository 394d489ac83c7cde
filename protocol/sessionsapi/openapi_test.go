package sessionsapi

import (
	"encoding/json"
	"slices"
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
