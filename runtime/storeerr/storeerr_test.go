package storeerr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestKinds(t *testing.T) {
	kinds := []error{ErrInvalid, ErrNotFound, ErrConflict, ErrTooLarge, ErrBody}
	for i, err := range []error{
		Invalid("bad %s", "name"),
		NotFound("file %q not found", "x"),
		Conflict("taken"),
		TooLarge("over %d bytes", 3),
		Body("reading the file part", io.ErrUnexpectedEOF),
	} {
		wrapped := fmt.Errorf("outer: %w", err)
		for j, k := range kinds {
			if got := errors.Is(wrapped, k); got != (i == j) {
				t.Errorf("%v is %v: %v", err, k, got)
			}
		}
	}
	if got := Invalid("bad %s", "name").Error(); got != "bad name" {
		t.Errorf("message %q: the kind must not show", got)
	}
	body := Body("reading the file part", io.ErrUnexpectedEOF)
	if !errors.Is(body, io.ErrUnexpectedEOF) || body.Error() != "reading the file part: unexpected EOF" {
		t.Errorf("body error %q does not carry its cause", body)
	}
}
