package session

import (
	"errors"
	"fmt"
	"strings"
)

// MinPrefix is the shortest id prefix Find accepts: shorter ones collide
// too often to be worth resolving.
const MinPrefix = 4

// AmbiguousError says a prefix or title matched several sessions.
type AmbiguousError struct {
	Ref        string
	Candidates []Meta // newest first, as List returns them
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions:", e.Ref, len(e.Candidates))
	for i, m := range e.Candidates {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Candidates)-5)
			break
		}
		title := "(untitled)"
		if m.Title != nil && *m.Title != "" {
			title = *m.Title
		}
		fmt.Fprintf(&b, "\n  %s %s", m.ID[:min(8, len(m.ID))], title)
	}
	return b.String()
}

// Find resolves what a user typed to name a session: a full id, then a
// unique id prefix, then an exact (case-sensitive) title. Each stage that
// matches several sessions is an *AmbiguousError rather than a guess,
// since acting on the wrong session (resume, trash) is hard to notice.
func Find(s Store, ref string) (*Meta, error) {
	if ValidateID(ref) == nil {
		m, err := s.LoadMeta(ref)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return m, err
		}
	}
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	if isIDPrefix(ref) {
		if m, err := pick(ref, all, func(m Meta) bool { return strings.HasPrefix(m.ID, ref) }); m != nil || err != nil {
			return m, err
		}
	}
	if ref != "" {
		if m, err := pick(ref, all, func(m Meta) bool { return m.Title != nil && *m.Title == ref }); m != nil || err != nil {
			return m, err
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, ref)
}

func pick(ref string, all []Meta, match func(Meta) bool) (*Meta, error) {
	var hits []Meta
	for _, m := range all {
		if match(m) {
			hits = append(hits, m)
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
		return &hits[0], nil
	}
	return nil, &AmbiguousError{Ref: ref, Candidates: hits}
}

// isIDPrefix accepts the characters of a canonical (lowercase) UUID, with at
// least MinPrefix hex digits.
func isIDPrefix(ref string) bool {
	hex := 0
	for _, r := range ref {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f':
			hex++
		case r == '-':
		default:
			return false
		}
	}
	return hex >= MinPrefix
}
