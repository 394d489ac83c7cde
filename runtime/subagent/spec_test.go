package subagent

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSpecMatchesSeed checks delegate_task against the copy of seed 000's
// entry in testdata: name and parameters byte for byte (compacted, as every
// spec is sent), the description byte for byte up to its last sentence,
// which lists the configured profiles instead of the seed's placeholder.
func TestSpecMatchesSeed(t *testing.T) {
	data, err := os.ReadFile("testdata/delegate_task_spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var seed struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(data, &seed); err != nil {
		t.Fatal(err)
	}
	const placeholder = "Available subagents: ... (lists configured profiles by name and description; empty unless subagent profiles are configured — see subagents.md)"
	head, ok := strings.CutSuffix(seed.Function.Description, placeholder)
	if !ok {
		t.Fatal("the seed's description no longer ends with the placeholder sentence")
	}
	var params bytes.Buffer
	if err := json.Compact(&params, seed.Function.Parameters); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		profiles map[string]Profile
		list     string
	}{
		{nil, "Available subagents: none configured"},
		{map[string]Profile{}, "Available subagents: none configured"},
		{map[string]Profile{
			"researcher": {Name: "researcher", Description: "Finds things out.\n  Cites sources."},
			"checker":    {Name: "checker", Description: "Checks facts."},
			"bare":       {Name: "bare"},
		}, "Available subagents:\n- bare\n- checker: Checks facts.\n- researcher: Finds things out. Cites sources."},
	}
	for _, c := range cases {
		got := NewTool(Options{Profiles: c.profiles}).Spec()
		if got.Name != seed.Function.Name {
			t.Errorf("name = %q, seed %q", got.Name, seed.Function.Name)
		}
		if string(got.Parameters) != params.String() {
			t.Errorf("parameters differ from the seed:\n got %s\nseed %s", got.Parameters, params.String())
		}
		if got.Description != head+c.list {
			t.Errorf("description:\n got %q\nwant %q", got.Description, head+c.list)
		}
	}
}
