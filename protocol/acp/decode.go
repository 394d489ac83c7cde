package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Lenient decoding. Agents add fields, send a list where the schema has
// one value (Claude's tool-call content), or a number as a string: such an
// oddity must cost the field, never the whole message, and must be seen
// (the host reports each one as a protocol error). DecodeLenient decodes
// field by field when a strict decode fails; the *DecodeError it returns
// lists what was left out.

// FieldError is one field that did not decode.
type FieldError struct {
	Field string // the JSON name ("content", "content[1]", "usage")
	Err   error
}

func (e FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// DecodeError says which fields of a message were left out; everything else
// was decoded.
type DecodeError struct {
	Fields []FieldError
}

func (e *DecodeError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return "fields left out: " + strings.Join(parts, "; ")
}

// Partial reports whether err is a *DecodeError: the value decoded, only
// some fields are missing.
func Partial(err error) bool {
	var de *DecodeError
	return errors.As(err, &de)
}

// addField records a field problem in *errp, creating the DecodeError.
func addField(errp **DecodeError, field string, err error) {
	if *errp == nil {
		*errp = &DecodeError{}
	}
	(*errp).Fields = append((*errp).Fields, FieldError{Field: field, Err: err})
}

// asError returns de as an error, nil when there were no problems.
func (de *DecodeError) asError() error {
	if de == nil || len(de.Fields) == 0 {
		return nil
	}
	return de
}

// DecodeLenient decodes the JSON object data into the struct v points to.
// A strict decode is tried first; when it fails, each field is decoded on
// its own, and the ones that do not decode are left zero and listed in the
// returned *DecodeError. Data that is not a JSON object fails as a whole
// (a plain error). null decodes to the zero value.
func DecodeLenient(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("acp: DecodeLenient needs a pointer to a struct, not %T", v)
	}
	if json.Unmarshal(data, v) == nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	rv.Elem().SetZero()
	var de *DecodeError
	decodeFields(fields, rv.Elem(), &de)
	return de.asError()
}

// decodeFields decodes each of the struct's fields from its JSON member;
// embedded structs are flattened as encoding/json does, a field of the
// outer struct hiding an embedded one's of the same name.
func decodeFields(fields map[string]json.RawMessage, sv reflect.Value, de **DecodeError) {
	decodeLevel(fields, sv, map[string]bool{}, de)
}

func decodeLevel(fields map[string]json.RawMessage, sv reflect.Value, taken map[string]bool, de **DecodeError) {
	st := sv.Type()
	var embedded []int
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			embedded = append(embedded, i)
			continue
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		if taken[name] {
			continue
		}
		taken[name] = true
		raw, ok := fields[name]
		if !ok {
			continue
		}
		fv := sv.Field(i)
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			fv.SetZero()
			addField(de, name, err)
		}
	}
	for _, i := range embedded {
		decodeLevel(fields, sv.Field(i), taken, de)
	}
}
