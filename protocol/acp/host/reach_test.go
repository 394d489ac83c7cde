package host

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
)

// TestReachOf: the paths and commands read from tool calls in the shapes
// claude-agent-acp and codex-acp send (their sources under
// testdata/acp/node_modules/@zed-industries and codex-acp's thread.rs)
// and in other spellings.
func TestReachOf(t *testing.T) {
	home, _ := os.UserHomeDir()
	tests := []struct {
		name     string
		toolCall string
		paths    []string
		command  string
	}{
		{"Claude Read", `{"toolCallId":"t","kind":"read","rawInput":{"file_path":"/etc/hostname"},"locations":[{"path":"/etc/hostname","line":1}]}`,
			[]string{"/etc/hostname"}, ""},
		{"Claude Write with its diff", `{"toolCallId":"t","kind":"edit","rawInput":{"file_path":"/o/a.txt","content":"/not/a/path"},"content":[{"type":"diff","path":"/o/a.txt","oldText":null,"newText":"x"}]}`,
			[]string{"/o/a.txt"}, ""},
		{"Claude NotebookEdit", `{"toolCallId":"t","rawInput":{"notebook_path":"nb.ipynb","new_source":"x"}}`, []string{"/w/nb.ipynb"}, ""},
		{"Claude Grep: the pattern is no path", `{"toolCallId":"t","kind":"search","rawInput":{"pattern":"/api/x","path":"/etc"}}`, []string{"/etc"}, ""},
		{"Claude Bash", `{"toolCallId":"t","kind":"execute","rawInput":{"command":"cat /etc/hostname","description":"x"}}`, nil, "cat /etc/hostname"},
		{"Codex exec (argv, cwd, parsed_cmd paths relative to it)", `{"toolCallId":"t","kind":"search","rawInput":{"call_id":"c","command":["/bin/bash","-lc","cat a"],"cwd":"/c","parsed_cmd":[{"type":"read","cmd":"cat a","name":"a","path":"a"}]}}`,
			[]string{"/c", "/c/a"}, "/bin/bash -lc cat a"},
		{"Codex apply_patch", `{"toolCallId":"t","kind":"edit","rawInput":{"changes":{"/w/a.go":{"type":"update","unified_diff":"","move_path":"/o/b.go"}},"grant_root":"/o"}}`,
			[]string{"/w/a.go", "/o/b.go", "/o"}, ""},
		{"Codex permissions request", `{"toolCallId":"t","rawInput":{"permissions":{"file_system":{"entries":[{"path":"/o/x","access":"write"}],"write":["/o/y"]}}}}`,
			[]string{"/o/x", "/w/write", "/o/y"}, ""},
		{"camelCase and kebab keys", `{"toolCallId":"t","rawInput":{"filePath":"/o/1","old-path":"/o/2","newPath":"/o/3","workingDirectory":"/o/4"}}`,
			[]string{"/o/1", "/o/2", "/o/3", "/o/4"}, ""},
		{"lists and nesting", `{"toolCallId":"t","rawInput":{"edits":[{"paths":["/o/1","/o/2"]},{"target":{"path":"/o/3"}}],"script":"make"}}`,
			[]string{"/o/1", "/o/2", "/o/3"}, "make"},
		{"file URLs, home", `{"toolCallId":"t","rawInput":{"uri":"file:///o/u","url":"https://example.com/x","source":"~/notes"},"content":[{"type":"resource_link","uri":"file:///o/r"}]}`,
			[]string{"/o/r", "/o/u", home + "/notes"}, ""},
		{"terminal content", `{"toolCallId":"t","kind":"other","content":[{"type":"terminal","terminalId":"x1"}]}`, nil, "terminal x1"},
		{"no input", `{"toolCallId":"t","kind":"think"}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tc acp.PermissionToolCall
			if err := json.Unmarshal([]byte(tt.toolCall), &tc); err != nil {
				t.Fatal(err)
			}
			x := reachOf(tc, "/w")
			got, want := slices.Sorted(slices.Values(x.Paths)), slices.Sorted(slices.Values(tt.paths))
			if !slices.Equal(got, want) || x.Command != tt.command {
				t.Errorf("paths %q command %q, want %q %q", got, x.Command, want, tt.command)
			}
		})
	}
}
