package bleveindex

import (
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
)

// The lean mapping every openheim index starts from (FIELD-NOTES: a third
// of the default's size and build time): English analysis, only declared
// fields, no _all. The index packages declare their documents on it.

// LeanMapping is an index mapping with the English analyzer (stemming,
// stop words) by default and nothing indexed, stored or given doc values
// dynamically.
func LeanMapping() *mapping.IndexMappingImpl {
	im := mapping.NewIndexMapping()
	im.DefaultAnalyzer = en.AnalyzerName
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im
}

// StaticDoc is a document mapping of declared fields only, without _all:
// it would copy every term a second time, and queries always name fields.
func StaticDoc() *mapping.DocumentMapping {
	dm := mapping.NewDocumentStaticMapping()
	dm.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	return dm
}

// TextField is an English-analysed text field, stored when store is set.
// It keeps term vectors although the lean mapping drops them: bleve needs
// positions for phrase queries, and searches rank exact phrases first.
func TextField(store bool) *mapping.FieldMapping {
	f := mapping.NewTextFieldMapping()
	f.Analyzer = en.AnalyzerName
	f.Store = store
	f.IncludeTermVectors = true
	f.IncludeInAll = false
	f.DocValues = false
	return f
}
