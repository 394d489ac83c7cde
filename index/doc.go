// Package index holds openheim's derived search indexes (bleve): memory
// notes and session full text. Everything here is rebuildable from the
// stores in runtime/, which stay the source of truth (DESIGN.md §4).
package index
