//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// liveProcs lists the running (not zombie) processes whose command line is
// exactly argv, words separated by spaces.
func liveProcs(t *testing.T, argv string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(argv, " ", "\x00") + "\x00"
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || string(cmdline) != want {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestToolProcessesDieWithOpenheim runs `prompt --allow-shell` whose
// execute_command is a shell with a background job and a foreground child
// (both grandchildren of openheim), ends openheim in each way it can end,
// and checks that neither sleep is left running.
func TestToolProcessesDieWithOpenheim(t *testing.T) {
	r := newRig(t)
	kills := 30
	if testing.Short() {
		kills = 3
	}
	type ending struct {
		name     string
		args     []string
		command  string                    // the tool's command; %[1]s and %[2]s are the sleeps' arguments
		end      func(p *os.Process) error // nil: the turn ends by itself
		wantCode int                       // -1: killed by a signal
	}
	endings := []ending{
		{"SIGTERM", nil, "sleep %[1]s & sleep %[2]s; :", sig(syscall.SIGTERM), 143},
		{"second SIGINT", nil, "sleep %[1]s & sleep %[2]s; :", func(p *os.Process) error {
			p.Signal(syscall.SIGINT)
			time.Sleep(20 * time.Millisecond)
			return p.Signal(syscall.SIGINT)
		}, 130},
		{"SIGHUP", nil, "sleep %[1]s & sleep %[2]s; :", sig(syscall.SIGHUP), -1},
		{"timeout", []string{"--timeout", "1s"}, "sleep %[1]s & sleep %[2]s; :", nil, 124},
		// The command returns, leaving a background job; the turn ends normally.
		{"normal end", nil, "sleep %[1]s >/dev/null 2>&1 & echo started; sleep %[2]s >/dev/null 2>&1 &", nil, 0},
	}
	for i := range kills {
		endings = append(endings, ending{fmt.Sprintf("kill -9 #%d", i+1), nil, "sleep %[1]s & sleep %[2]s; :", sig(syscall.SIGKILL), -1})
	}
	survivors := 0
	for i, e := range endings {
		a, b := fmt.Sprintf("3600.%d1", i), fmt.Sprintf("3600.%d2", i)
		args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf(e.command, a, b)})
		r.srv.Reset()
		r.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "execute_command", Arguments: string(args)}}},
			llmtest.Reply{Text: []string{"done"}})
		cmd, _, errOut := r.command(append(e.args, "--allow-shell", "run it")...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var pids []int
		deadline := time.Now().Add(10 * time.Second)
		for len(pids) < 2 && time.Now().Before(deadline) && e.end != nil {
			pids = append(liveProcs(t, "sleep "+a), liveProcs(t, "sleep "+b)...)
			time.Sleep(5 * time.Millisecond)
		}
		if e.end != nil {
			if len(pids) < 2 {
				cmd.Process.Kill()
				t.Fatalf("%s: the tool's sleeps did not start: %v\n%s", e.name, pids, errOut)
			}
			e.end(cmd.Process)
		}
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != e.wantCode {
			t.Errorf("%s: exit code %d, want %d\n%s", e.name, code, e.wantCode, errOut)
		}
		left := func() []int { return append(liveProcs(t, "sleep "+a), liveProcs(t, "sleep "+b)...) }
		deadline = time.Now().Add(5 * time.Second)
		for len(left()) > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if l := left(); len(l) > 0 {
			survivors++
			t.Errorf("%s: tool processes %v outlived openheim", e.name, l)
			for _, pid := range l {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	t.Logf("%d endings (%d of them kill -9), %d left processes behind", len(endings), kills, survivors)
}

func sig(s syscall.Signal) func(*os.Process) error {
	return func(p *os.Process) error { return p.Signal(s) }
}
