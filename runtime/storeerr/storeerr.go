// Package storeerr says why a store refused a request, in words for the
// client and as a kind every transport maps the same way (the sessions API
// to an HTTP status). The file stores and the cluster stores beside them
// refuse with the same kinds, so a transport never looks at which store
// answered.
package storeerr

import (
	"errors"
	"fmt"
)

// The kinds; errors.Is tells them apart.
var (
	ErrInvalid  = errors.New("invalid request")
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrTooLarge = errors.New("too large")
	// ErrBody: reading what the client sent failed (a broken or slow
	// upload), not the store; the cause is wrapped too.
	ErrBody = errors.New("reading the request failed")
)

// Error is a refusal: Msg is the whole message, Kind one of the kinds.
type Error struct {
	Kind  error
	Msg   string
	Cause error // the client's read error, for ErrBody
}

func (e *Error) Error() string { return e.Msg }

// Unwrap makes errors.Is(err, kind) and errors.As on the cause work.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

func refuse(kind error, format string, a []any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// Invalid refuses a request that cannot be right as it is.
func Invalid(format string, a ...any) error { return refuse(ErrInvalid, format, a) }

// NotFound refuses a request for something the store does not have.
func NotFound(format string, a ...any) error { return refuse(ErrNotFound, format, a) }

// Conflict refuses a request that clashes with what the store has.
func Conflict(format string, a ...any) error { return refuse(ErrConflict, format, a) }

// TooLarge refuses content over a limit.
func TooLarge(format string, a ...any) error { return refuse(ErrTooLarge, format, a) }

// Body wraps cause, the failure of reading the client's upload, saying
// what was being read.
func Body(what string, cause error) error {
	return &Error{Kind: ErrBody, Msg: what + ": " + cause.Error(), Cause: cause}
}
