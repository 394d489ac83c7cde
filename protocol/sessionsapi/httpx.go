package sessionsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/openheim/openheim/runtime/storeerr"
)

// apiError is an error with the HTTP status it answers with. Bodies are
// {"error": "..."} as everywhere else in `openheim serve`.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) error {
	return &apiError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) error {
	return &apiError{http.StatusConflict, fmt.Sprintf(format, a...)}
}

// tooLarge is a 413: a body, or a part of one, over its limit.
func tooLarge(format string, a ...any) error {
	return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf(format, a...)}
}

// readError is what a failed read of the request body answers: 413 past
// the body limit, 408 when the client was too slow to send it (the
// server's read deadline), else a 400 saying what was being read.
func readError(what string, err error) error {
	if cut := cutBody(err); cut != nil {
		return cut
	}
	return badRequest("%s: %v", what, err)
}

// cutBody is the answer to a body the server cut off (past its limit, or
// too slow to arrive); nil when err is not that.
func cutBody(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &apiError{http.StatusRequestTimeout, "the request body did not arrive within the read timeout"}
	}
	return nil
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// storeStatus is the status of each kind of a store's refusal.
var storeStatus = map[error]int{
	storeerr.ErrInvalid:  http.StatusBadRequest,
	storeerr.ErrNotFound: http.StatusNotFound,
	storeerr.ErrConflict: http.StatusConflict,
	storeerr.ErrTooLarge: http.StatusRequestEntityTooLarge,
}

// fromStore turns a store's refusal into the API's answer to it.
func fromStore(se *storeerr.Error) error {
	if cut := cutBody(se.Cause); se.Kind == storeerr.ErrBody && cut != nil {
		return cut
	}
	if se.Kind == storeerr.ErrBody {
		return badRequest("%s", se.Msg)
	}
	if status, ok := storeStatus[se.Kind]; ok {
		return &apiError{status, se.Msg}
	}
	return errors.New(se.Msg) // a kind this API does not know: a 500

}

// writeError answers with err's status (500 for an error without one).
func writeError(w http.ResponseWriter, err error) {
	if se, ok := errors.AsType[*storeerr.Error](err); ok {
		err = fromStore(se)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		writeJSON(w, ae.status, map[string]string{"error": ae.msg})
		return
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": fmt.Sprintf("request body over %d bytes", tooBig.Limit)})
		return
	}
	writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
}

// decodeJSON reads the request body into v, refusing unknown fields and
// trailing data.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return readError("invalid JSON body", err)
	}
	if dec.More() {
		return badRequest("invalid JSON body: data after the JSON value")
	}
	return nil
}

// List is seed 003's paginated list.
type List[T any] struct {
	Object  string  `json:"object"` // "list"
	Data    []T     `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// pageQuery is the limit/after/before/order of a list request.
type pageQuery struct {
	limit         int
	after, before string
	desc          bool
}

// maxPage is the largest limit a list request may ask for.
const maxPage = 1000

// parsePage reads limit (default 20, 1..1000), after, before and order
// ("asc" or "desc"; defaultOrder when absent).
func parsePage(q url.Values, defaultOrder string) (pageQuery, error) {
	p := pageQuery{limit: 20, after: q.Get("after"), before: q.Get("before")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPage {
			return p, badRequest("limit must be an integer from 1 to %d, not %q", maxPage, s)
		}
		p.limit = n
	}
	order := q.Get("order")
	if order == "" {
		order = defaultOrder
	}
	switch order {
	case "asc":
	case "desc":
		p.desc = true
	default:
		return p, badRequest(`order must be "asc" or "desc", not %q`, order)
	}
	if p.after != "" && p.before != "" {
		return p, badRequest("give after or before, not both")
	}
	return p, nil
}

// paginate returns one page of items, which are in ascending order; id
// names an item for the after/before cursors. A cursor naming no item is a
// 400.
func paginate[T any](items []T, id func(T) string, p pageQuery) (List[T], error) {
	if p.desc {
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	start, end := 0, len(items)
	cursor := func(c string) (int, error) {
		i := slices.IndexFunc(items, func(t T) bool { return id(t) == c })
		if i < 0 {
			return 0, badRequest("cursor %q names no item of this list", c)
		}
		return i, nil
	}
	switch {
	case p.after != "":
		i, err := cursor(p.after)
		if err != nil {
			return List[T]{}, err
		}
		start = i + 1
	case p.before != "":
		i, err := cursor(p.before)
		if err != nil {
			return List[T]{}, err
		}
		end = i
		start = max(0, end-p.limit)
	}
	page := items[start:end]
	more := len(page) > p.limit
	if p.before != "" {
		more = start > 0
	}
	if len(page) > p.limit {
		page = page[:p.limit]
	}
	out := List[T]{Object: "list", Data: append([]T{}, page...), HasMore: more}
	if len(page) > 0 {
		first, last := id(page[0]), id(page[len(page)-1])
		out.FirstID, out.LastID = &first, &last
	}
	return out, nil
}
