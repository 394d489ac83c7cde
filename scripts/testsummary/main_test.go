package main

import (
	"strings"
	"testing"
)

const run = `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK"}
{"Action":"run","Package":"p/a","Test":"TestPeer"}
{"Action":"output","Package":"p/a","Test":"TestPeer","Output":"=== RUN   TestPeer\n"}
{"Action":"output","Package":"p/a","Test":"TestPeer","Output":"    acp_test.go:86: node or testdata/acp/node_modules missing; run: npm ci --prefix testdata/acp\n"}
{"Action":"output","Package":"p/a","Test":"TestPeer","Output":"--- SKIP: TestPeer (0.00s)\n"}
{"Action":"skip","Package":"p/a","Test":"TestPeer"}
{"Action":"run","Package":"p/a","Test":"TestShort"}
{"Action":"output","Package":"p/a","Test":"TestShort","Output":"    x_test.go:9: spawns 50 processes\n"}
{"Action":"skip","Package":"p/a","Test":"TestShort"}
{"Action":"output","Package":"p/a","Output":"PASS\n"}
{"Action":"output","Package":"p/a","Output":"ok  \tp/a\t0.5s\n"}
{"Action":"pass","Package":"p/a"}
{"Action":"run","Package":"p/b","Test":"TestBad"}
{"Action":"output","Package":"p/b","Test":"TestBad","Output":"    b_test.go:3: boom\n"}
{"Action":"output","Package":"p/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p/b","Test":"TestBad"}
{"Action":"output","Package":"p/b","Output":"FAIL\tp/b\t0.1s\n"}
{"Action":"fail","Package":"p/b"}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	failed, skips, err := summarize(strings.NewReader(run), &out)
	if err != nil || !failed || len(skips) != 2 {
		t.Fatalf("failed %v, skips %+v, err %v", failed, skips, err)
	}
	for _, want := range []string{"ok  \tp/a\t0.5s\n", "    b_test.go:3: boom\n--- FAIL: TestBad", "FAIL\tp/b\t0.1s\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", out.String())
	}
	out.Reset()
	if code := report(&out, false, skips, false); code != 1 || !strings.Contains(out.String(), "2 tests skipped:") ||
		!strings.Contains(out.String(), "  spawns 50 processes\n    p/a TestShort\n") ||
		!strings.Contains(out.String(), "FAIL: 1 test needs the npm test peers") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := report(&out, false, skips, true); code != 0 || !strings.Contains(out.String(), "OPENHEIM_SKIP_PEERS=1") {
		t.Errorf("with OPENHEIM_SKIP_PEERS=1: exit %d:\n%s", code, out.String())
	}
	if code := report(&out, false, skips[1:], false); code != 0 {
		t.Errorf("a skip that is not a peer's failed the run")
	}
	if _, _, err := summarize(strings.NewReader(""), &out); err == nil {
		t.Error("no input passed")
	}
}
