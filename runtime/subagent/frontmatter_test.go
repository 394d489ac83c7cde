package subagent

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFrontMatterEdgeCases: inputs the hand-written parser read, read the
// same through yaml.v3, including plain values YAML itself refuses.
func TestFrontMatterEdgeCases(t *testing.T) {
	for _, c := range []struct {
		name, front string
		want        Profile
	}{
		{"colon in a plain value", "description: Reviews code: finds bugs, suggests fixes", Profile{Description: "Reviews code: finds bugs, suggests fixes"}},
		{"value ending in a colon", "description: Use it when:", Profile{Description: "Use it when:"}},
		{"colon value with a comment", "description: a: b # why", Profile{Description: "a: b"}},
		{"no space after the key", "model:gpt-4o\nprovider:openai", Profile{Model: "gpt-4o", Provider: "openai"}},
		{"leading dash", "description: - a dash", Profile{Description: "- a dash"}},
		{"hash inside a word", "description: C# and F#", Profile{Description: "C# and F#"}},
		{"words YAML types", "description: yes\nmodel: null\nprovider: ~", Profile{Description: "yes", Model: "null", Provider: "~"}},
		{"quoted number", "max_iterations: \"5\"", Profile{MaxIterations: 5}},
		{"escapes", `description: "tab\there \u00e9"` + "\nmodel: 'it''s'", Profile{Description: "tab\there é", Model: "it's"}},
		{"tab after the colon", "description:\tx", Profile{Description: "x"}},
		{"empty value", "description:\nmodel: m", Profile{Model: "m"}},
		{"comma list with quotes", `tools: a, "b", 'c'`, Profile{Tools: []string{"a", "b", "c"}}},
		{"one quoted tool", `tools: "read_file"`, Profile{Tools: []string{"read_file"}}},
		{"block list with gaps", "tools:\n  - a\n\n  # the next one\n  - b\ndescription: x", Profile{Tools: []string{"a", "b"}, Description: "x"}},
		{"block list at column 0", "tools:\n- a\n- b", Profile{Tools: []string{"a", "b"}}},
		{"inherit with a comment", "tools: # the parent's", Profile{}},
		{"empty front matter", "", Profile{}},
		{"only comments", "# nothing\n\n# here", Profile{}},
		{"acp agent", "acp_agent: claude", Profile{ACPAgent: "claude"}},
		// YAML's own syntax, which the old parser refused, reads as YAML.
		{"anchor and tag", "description: &a x\nmodel: !!str m", Profile{Description: "x", Model: "m"}},
		{"list closed after a comment", "tools: [a, b] # two", Profile{Tools: []string{"a", "b"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseProfile("p", "---\n"+c.front+"\n---\nBody")
			c.want.Name, c.want.System = "p", "Body"
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, %v\nwant %#v", got, err, c.want)
			}
		})
	}
}

func TestFrontMatterEdgeErrors(t *testing.T) {
	for _, c := range []struct{ name, front, want string }{
		{"reserved character", "description: @x", `2: description: found character that cannot start any token`},
		{"backtick", "description: `x", "2: description: found character that cannot start any token"},
		{"alias", "description: *a", `2: description: unknown anchor 'a' referenced`},
		{"flow list as a value", "description: [a]", `2: description: want one value, not a list or a mapping`},
		{"flow mapping as a value", "description: {a: b}", `2: description: want one value, not a list or a mapping`},
		{"block list as a value", "model: m\ndescription:\n  - a", "3: description: want one value, not a list or a mapping"},
		{"nested list of tools", "tools: [a, [b]]", `2: tools: empty tool name in "tools: [a, [b]]"`},
		{"empty comma item", "tools: a,,b", `2: tools: empty or bad tool name in "a,,b"`},
		{"indented key after a key", "description: x\n  model: y", "3: model: mapping values are not allowed"},
		{"tab indentation", "description: x\n\tmodel: y", "3: model: found a tab character"},
		{"capital key", "Description: x", "2: expected `key: value`, got \"Description: x\""},
		{"quoted key", `"model": m`, "2: expected `key: value`"},
		{"bad double quote", `model: "a\qb"`, `2: model: found unknown escape character`},
		{"bad single quote", "model: 'a", `2: model: found unexpected end of stream`},
		{"item line", "tools:\n  - a\n\n  - \"\"", "5: expected a tool name after '-', got \"- \\\"\\\"\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseProfile("p", "---\n"+c.front+"\n---\nBody")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %v\nwant prefix %s", err, c.want)
			}
		})
	}
}

// TestReadProfilesKeepsGoing: one bad file costs only itself; LoadProfiles
// fails on the first bad file by name.
func TestReadProfilesKeepsGoing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good.md":  "---\ndescription: fine\n---\nBody",
		"b_bad.md": "---\nmodel: a\nmodel: b\n---\n",
		"a_bad.md": "---\nnever closed\n",
	})
	profiles, bad, err := ReadProfiles(dir)
	if err != nil || len(profiles) != 1 || profiles["good"].Description != "fine" || len(bad) != 2 {
		t.Fatalf("profiles %v, bad %v, err %v", profiles, bad, err)
	}
	if !strings.Contains(bad["b_bad.md"].Error(), filepath.Join(dir, "b_bad.md")+":3: model is set twice") {
		t.Errorf("b_bad.md: %v", bad["b_bad.md"])
	}
	if _, err := LoadProfiles(dir); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "a_bad.md")+":1:") {
		t.Errorf("LoadProfiles: %v, want a_bad.md's error", err)
	}
}
