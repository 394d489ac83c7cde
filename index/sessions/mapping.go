package sessions

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/datetime/timestamp/nanoseconds"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/openheim/openheim/index/bleveindex"
)

// schemaVersion is stored inside the index; bump it whenever the mapping or
// the document layout changes so old indexes report ErrStale and get rebuilt
// instead of silently answering with half the fields missing.
const schemaVersion = "sessions/1"

var schemaKey = []byte("openheim.schema")

const (
	kindSession = "session"
	kindMessage = "message"

	sessionPrefix = "s/"
	messagePrefix = "m/"
)

// storedSessionFields is everything List and Get read back, so a listing
// never needs the session stores.
var storedSessionFields = []string{"title", "model", "provider", "cwd", "created", "updated", "messages", "parent"}

func newMapping() *mapping.IndexMappingImpl {
	im := bleveindex.LeanMapping()
	im.TypeField = "kind"
	// Unknown kinds are dropped rather than dynamically indexed: every field
	// the index holds is declared below, so its size stays predictable.
	im.DefaultMapping = mapping.NewDocumentDisabledMapping()

	session := staticDoc()
	session.AddFieldMappingsAt("title", bleveindex.TextField(true))
	session.AddFieldMappingsAt("cwd", keywordField(true))
	session.AddFieldMappingsAt("updated", timeField(true, true))
	session.AddFieldMappingsAt("created", timeField(false, true))
	session.AddFieldMappingsAt("model", storedOnly(keywordField(true)))
	session.AddFieldMappingsAt("provider", storedOnly(keywordField(true)))
	session.AddFieldMappingsAt("messages", storedOnly(numberField()))
	// parent came later without a schema bump: a document without it is
	// a session of its own, which every session indexed before it is.
	session.AddFieldMappingsAt("parent", storedOnly(keywordField(true)))
	im.AddDocumentMapping(kindSession, session)

	// Messages carry no time: Search breaks score ties with the session
	// doc's updated, which is always current (a time on each message would
	// be the time it was indexed), and measured on 200,000 messages a
	// datetime each cost 18 MB (+23%) and made List's sort 10 ms slower.
	message := staticDoc()
	message.AddFieldMappingsAt("session", keywordField(false))
	message.AddFieldMappingsAt("n", storedOnly(numberField()))
	message.AddFieldMappingsAt("text", bleveindex.TextField(false))
	im.AddDocumentMapping(kindMessage, message)
	return im
}

// staticDoc is a document of one kind: its kind and declared fields.
func staticDoc() *mapping.DocumentMapping {
	dm := bleveindex.StaticDoc()
	dm.AddFieldMappingsAt("kind", keywordField(false))
	return dm
}

func keywordField(store bool) *mapping.FieldMapping {
	f := mapping.NewKeywordFieldMapping()
	f.Analyzer = keyword.Name
	f.Store = store
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

// timeField stores unix nanoseconds as a bleve datetime: exact to the
// nanosecond (a float "number" would round them) and range-queryable.
func timeField(index, store bool) *mapping.FieldMapping {
	f := mapping.NewDateTimeFieldMapping()
	f.DateFormat = nanoseconds.Name
	f.Index = index
	f.Store = store
	f.DocValues = index // doc values are what SortBy reads
	f.IncludeInAll = false
	return f
}

func numberField() *mapping.FieldMapping {
	f := mapping.NewNumericFieldMapping()
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

func storedOnly(f *mapping.FieldMapping) *mapping.FieldMapping {
	f.Index = false
	f.Store = true
	f.DocValues = false
	return f
}

func sessionDoc(s Session) map[string]any {
	d := map[string]any{"kind": kindSession, "messages": float64(s.Messages)}
	putString(d, "title", s.Title)
	putString(d, "cwd", s.Cwd)
	putString(d, "model", s.Model)
	putString(d, "provider", s.Provider)
	putString(d, "parent", s.Parent)
	putTime(d, "created", s.CreatedAt)
	putTime(d, "updated", s.UpdatedAt)
	return d
}

func messageDoc(sessionID string, n int, text string) map[string]any {
	return map[string]any{"kind": kindMessage, "session": sessionID, "n": float64(n), "text": text}
}

func putString(d map[string]any, k, v string) {
	if v != "" {
		d[k] = v
	}
}

// putTime leaves zero times out: time.Time{} is outside the int64 nanosecond
// range, and an absent field reads back as the zero time anyway.
func putTime(d map[string]any, k string, t time.Time) {
	if !t.IsZero() {
		d[k] = strconv.FormatInt(t.UnixNano(), 10)
	}
}

func sessionDocID(id string) string { return sessionPrefix + id }

func messageDocID(id string, n int) string {
	return messagePrefix + id + "/" + strconv.Itoa(n)
}

// parseDocID recovers the session id and message number from a document id,
// so Search needs no stored-field reads. Session ids may contain "/": the
// message number is always after the last one.
func parseDocID(docID string) (session string, n int, ok bool) {
	if rest, found := strings.CutPrefix(docID, sessionPrefix); found {
		return rest, -1, rest != ""
	}
	rest, found := strings.CutPrefix(docID, messagePrefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return rest[:i], n, true
}

func decodeSession(docID string, fields map[string]any) (Session, error) {
	id, n, ok := parseDocID(docID)
	if !ok || n != -1 {
		return Session{}, fmt.Errorf("sessions: unexpected document %q", docID)
	}
	s := Session{ID: id}
	s.Title, _ = fields["title"].(string)
	s.Model, _ = fields["model"].(string)
	s.Provider, _ = fields["provider"].(string)
	s.Cwd, _ = fields["cwd"].(string)
	s.Parent, _ = fields["parent"].(string)
	if v, ok := fields["messages"].(float64); ok {
		s.Messages = int(v)
	}
	var err error
	if s.CreatedAt, err = decodeTime(fields["created"]); err != nil {
		return Session{}, err
	}
	if s.UpdatedAt, err = decodeTime(fields["updated"]); err != nil {
		return Session{}, err
	}
	return s, nil
}

// decodeTime reads a stored datetime: bleve hands back values indexed with
// the unix_nano parser as their decimal nanosecond count.
func decodeTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok || s == "" {
		return time.Time{}, nil
	}
	ns, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("sessions: stored time %q: %w", s, err)
	}
	return time.Unix(0, ns), nil
}
