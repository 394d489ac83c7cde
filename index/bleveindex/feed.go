package bleveindex

import "fmt"

// Feed is the loop of a rebuild: it hands every item source yields to add
// and calls progress (may be nil) after each with the count so far and
// total. The first failure of add stops the source and is returned as
// is; a failure of the source itself is returned as "what: err".
func Feed[T any](source func(yield func(T) bool) error, add func(T) error, total int, progress func(done, total int), what string) error {
	done := 0
	var aerr error
	serr := source(func(v T) bool {
		if aerr = add(v); aerr != nil {
			return false
		}
		done++
		if progress != nil {
			progress(done, total)
		}
		return true
	})
	switch {
	case aerr != nil:
		return aerr
	case serr != nil:
		return fmt.Errorf("%s: %w", what, serr)
	}
	return nil
}
