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
// {"error": {"code": "...", "message": "..."}}: the code is what a client
// switches on (seed 003 names invalid_input), the message what it shows.
type apiError struct {
	status int
	msg    string
	code   string // "" is the status's own (errorCode)
}

func (e *apiError) Error() string { return e.msg }

// Code is the machine-readable kind of the error.
func (e *apiError) Code() string {
	if e.code != "" {
		return e.code
	}
	return errorCode(e.status)
}

// Error codes, by the status they usually come with.
const (
	codeInvalidInput = "invalid_input"
	codeNotFound     = "not_found"
	codeConflict     = "conflict"
	codeTooLarge     = "payload_too_large"
	codeTimeout      = "request_timeout"
	codeUnauthorized = "unauthorized"
	codeForbidden    = "forbidden"
	codeServerError  = "server_error"
	codeUnavailable  = "unavailable"
	// codeSessionFailed refuses an event to a session in the failed state.
	codeSessionFailed = "session_failed"
)

// errorCode is the code of an error answered with status.
func errorCode(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return codeInvalidInput
	case http.StatusNotFound:
		return codeNotFound
	case http.StatusConflict:
		return codeConflict
	case http.StatusRequestEntityTooLarge:
		return codeTooLarge
	case http.StatusRequestTimeout:
		return codeTimeout
	case http.StatusServiceUnavailable:
		return codeUnavailable
	case http.StatusUnauthorized:
		return codeUnauthorized
	case http.StatusForbidden:
		return codeForbidden
	}
	return codeServerError
}

// ErrorBody is the body of an error answer of this API, for the layers in
// front of it (the server's token check, limits and timeouts) to answer
// in the same shape.
func ErrorBody(status int, msg string) map[string]any {
	return errorBody(errorCode(status), msg)
}

func errorBody(code, msg string) map[string]any {
	return map[string]any{"error": map[string]string{"code": code, "message": msg}}
}

func badRequest(format string, a ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, a...)}
}

// invalid is a 422: a request body that is not what the route takes (seed
// 003's "fails validation").
func invalid(format string, a ...any) error {
	return &apiError{status: http.StatusUnprocessableEntity, msg: fmt.Sprintf(format, a...)}
}

// unprocessable makes err, a 400 of this API, a 422: the routes whose
// body validation seed 003 answers with 422 (creating a session, posting
// an event) use it on what their checks refuse. Other statuses stay.
func unprocessable(err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusBadRequest {
		return &apiError{status: http.StatusUnprocessableEntity, msg: ae.msg, code: ae.code}
	}
	return err
}

func notFound(format string, a ...any) error {
	return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) error {
	return &apiError{status: http.StatusConflict, msg: fmt.Sprintf(format, a...)}
}

// tooLarge is a 413: a body, or a part of one, over its limit.
func tooLarge(format string, a ...any) error {
	return &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf(format, a...)}
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
		return &apiError{status: http.StatusRequestTimeout, msg: "the request body did not arrive within the read timeout"}
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
		return &apiError{status: status, msg: se.Msg}
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
		writeJSON(w, ae.status, errorBody(ae.Code(), ae.msg))
		return
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeJSON(w, http.StatusRequestEntityTooLarge, ErrorBody(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit)))
		return
	}
	writeJSON(w, http.StatusInternalServerError, ErrorBody(http.StatusInternalServerError, err.Error()))
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
