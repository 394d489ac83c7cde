package commands

import (
	"errors"
	"fmt"
)

// Exit codes of every command (DESIGN.md §3).
const (
	ExitOK        = 0
	ExitFailure   = 1   // runtime failure: provider, tool, I/O
	ExitUsage     = 2   // usage or configuration error
	ExitStopped   = 3   // the turn stopped early: max_turn_requests, max_tokens, refusal
	ExitTimeout   = 124 // --timeout expired
	ExitInterrupt = 130 // Ctrl-C (128 + SIGINT)
)

// ExitError carries the exit code a failure maps to. Silent means the
// command already reported it (e.g. in its NDJSON) and main prints nothing.
type ExitError struct {
	Code   int
	Err    error
	Hint   string
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageErr is a usage or configuration error.
func usageErr(err error, hint string) error {
	return &ExitError{Code: ExitUsage, Err: err, Hint: hint}
}

// failure is a runtime failure.
func failure(err error) error { return &ExitError{Code: ExitFailure, Err: err} }

// CodeOf returns the exit code for err (nil is success).
func CodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}
