package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Error codes: JSON-RPC 2.0's and the ones ACP adds (DESIGN.md §3).
const (
	ParseError       = -32700
	InvalidRequest   = -32600
	MethodNotFound   = -32601
	InvalidParams    = -32602
	Internal         = -32603
	ResourceNotFound = -32002
	AuthRequired     = -32000
)

// Error is a JSON-RPC error object. A handler returning one (or an error
// wrapping one) has it sent as is; any other error becomes Internal with
// the error's text as data.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// NewError returns an error with code's standard message and data (nil for
// none).
func NewError(code int, data any) *Error {
	return &Error{Code: code, Message: Message(code), Data: data}
}

// Message is the standard message of code.
func Message(code int) string {
	switch code {
	case ParseError:
		return "Parse error"
	case InvalidRequest:
		return "Invalid request"
	case MethodNotFound:
		return "Method not found"
	case InvalidParams:
		return "Invalid params"
	case Internal:
		return "Internal error"
	case ResourceNotFound:
		return "Resource not found"
	case AuthRequired:
		return "Authentication required"
	}
	if code >= -32099 && code <= -32000 {
		return "Server error"
	}
	return "Error"
}

func (e *Error) Error() string {
	s := fmt.Sprintf("jsonrpc: %s (%d)", e.Message, e.Code)
	switch d := e.Data.(type) {
	case nil:
	case string:
		s += ": " + d
	default:
		if b, err := json.Marshal(d); err == nil {
			s += ": " + string(b)
		}
	}
	return s
}
