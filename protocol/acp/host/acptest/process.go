package acptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// EnvVar holds the JSON Script of a process-mode fake agent.
const EnvVar = "ACPTEST_FAKE_AGENT"

// MaybeRunFakeAgent turns the current test binary into the fake agent when
// EnvVar is set: it serves the Script in EnvVar on stdin/stdout, logs what
// it receives to stderr (one {"recv":...} line each, see ParseLog) and
// exits the process (0 on end of input, 1 on a read error, 2 on a bad
// script, 3 for CrashInPrompt). Otherwise it returns at once. Call it
// first thing in TestMain of the package whose tests use Command:
//
//	func TestMain(m *testing.M) {
//		acptest.MaybeRunFakeAgent()
//		os.Exit(m.Run())
//	}
func MaybeRunFakeAgent() {
	js, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	var s Script
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintf(os.Stderr, "acptest: bad %s: %v\n", EnvVar, err)
		os.Exit(2)
	}
	if s.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	s.Log = os.Stderr
	s.exit = os.Exit
	// With IgnoreEOF, Serve waits on a context that is never done; a
	// pending timer keeps the runtime from calling that a deadlock and
	// exiting, which would defeat the point (the host must kill us).
	go func() {
		for {
			time.Sleep(time.Hour)
		}
	}()
	if err := Serve(context.Background(), s, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "acptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns how to start the current test binary as a fake agent
// running s: the binary, "-test.run=^$" (so that a binary whose TestMain
// forgot MaybeRunFakeAgent runs no tests instead of recursing) and the
// environment with EnvVar set. It gives host tests a real child process,
// which process-group kills and agents ignoring EOF need. It panics if s
// cannot be marshalled (a Capabilities value that is not JSON).
func Command(s Script) (command string, args []string, env []string) {
	b, err := json.Marshal(s)
	if err != nil {
		panic("acptest: marshal script: " + err.Error())
	}
	command, err = os.Executable()
	if err != nil {
		command = os.Args[0]
	}
	race := false
	for _, kv := range os.Environ() {
		race = race || strings.HasPrefix(kv, "GORACE=")
		if !strings.HasPrefix(kv, EnvVar+"=") {
			env = append(env, kv)
		}
	}
	if !race {
		// Under -race the child would sleep 1 s at exit (the race
		// runtime's default), which hosts would see as a slow shutdown.
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return command, []string{"-test.run=^$"}, append(env, EnvVar+"="+string(b))
}
