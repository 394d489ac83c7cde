package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/redact/redacttest"
)

// TestChatREPLMasksSecrets: the interactive chat, with a secret planted in
// every config field: the MCP warnings, an answer quoting every secret and
// the error line of a turn whose provider answers 401 quoting the request
// and every secret show none of them on the terminal.
func TestChatREPLMasksSecrets(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"quoting " + redacttest.Known()}},
		llmtest.Reply{Status: 401, EchoRequest: true, ErrorBody: redacttest.Known()})
	dir := t.TempDir()
	home, work, cfg := filepath.Join(dir, "home"), filepath.Join(dir, "work"), filepath.Join(dir, "config.toml")
	os.MkdirAll(work, 0o755)
	os.WriteFile(cfg, []byte(redacttest.Config(work, srv.URL())), 0o600)
	tm := startTerm(t, home, []string{redacttest.EnvVar + "=" + redacttest.EnvKey}, "--config", cfg, "chat")
	tm.expect(`› *$`)
	tm.send("first\r")
	tm.expect(`quoting known: <redacted>`)
	tm.expect(`› *$`)
	tm.send("second\r")
	tm.expect(`✗ provider fake .*HTTP 401: .*<redacted>`)
	tm.expect(`› *$`)
	tm.send("\x04")
	tm.wait()
	if leaks := redacttest.Leaks(tm.raw()); len(leaks) > 0 {
		t.Errorf("the terminal shows %v:\n%s", leaks, tm.screen())
	}
}
