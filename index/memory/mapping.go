package memory

import (
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/openheim/openheim/index/bleveindex"
)

// schemaVersion is stored inside the index; bump it whenever the mapping or
// the document layout changes so old indexes report ErrStale and get rebuilt.
const schemaVersion = "memory/2"

var (
	schemaKey = []byte("openheim.schema")
	seqKey    = []byte("openheim.seq")
)

// newMapping is the lean mapping (FIELD-NOTES): one analyzed text field,
// not stored (the log holds the text), no _all. The English analyzer stems
// ("preferences", "prefer" and "preferred" are one term) and drops stop
// words. Term vectors stay on: phrase queries need the positions, and
// Search ranks exact phrases first.
//
// No time field: recency comes from the caller (see Search). Measured on
// 100,000 notes, an "updated" datetime with doc values cost 20 MB (+65%),
// 3.5 s of build time (+85%), and sorting by it made queries ~10x slower,
// because the sort reads it for every matching note.
func newMapping() *mapping.IndexMappingImpl {
	im := bleveindex.LeanMapping()
	note := bleveindex.StaticDoc()
	note.AddFieldMappingsAt("text", bleveindex.TextField(false))
	im.DefaultMapping = note
	return im
}

func document(d Doc) map[string]any { return map[string]any{"text": d.Text} }

func docID(id int64) string { return strconv.FormatInt(id, 10) }

func parseDocID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// analyzer is the text field's analyzer, for code that must see the words
// the way the index does (Search's tiers, the Scan fallback).
var analyzer = sync.OnceValue(func() analysis.Analyzer {
	return newMapping().AnalyzerNamed(en.AnalyzerName)
})

// Terms returns the analyzed terms of s in order (lower-cased, stemmed,
// stop words dropped), with their token positions.
func Terms(s string) (terms []string, positions []int) {
	for _, tok := range analyzer().Analyze([]byte(s)) {
		terms = append(terms, string(tok.Term))
		positions = append(positions, tok.Position)
	}
	return terms, positions
}
