package memory

import (
	"cmp"
	"math"
	"slices"
)

// Scan ranks docs against q without an index: the fallback while the index
// is busy (another process is writing it) or being rebuilt. It analyzes the
// text the way the index does and keeps Search's tiers (exact phrase, all
// words, any word); within a tier it ranks by query-term occurrences per
// √(note length), a rough tf-idf without the idf, then newest first by
// newer (nil: by id). It costs a full pass over the notes' text.
func Scan(q string, docs []Doc, limit int, newer Recency) []Hit {
	qterms, qpos := Terms(q)
	want := make(map[string]bool, len(qterms))
	for _, t := range qterms {
		want[t] = true
	}
	if len(want) == 0 || limit <= 0 {
		return nil
	}
	if newer == nil {
		newer = func(id int64) int64 { return id }
	}
	type ranked struct {
		Hit
		tier  int
		order int64
	}
	var all []ranked
	for _, d := range docs {
		terms, pos := Terms(d.Text)
		found := make(map[string]bool, len(want))
		occurrences := 0
		for _, t := range terms {
			if want[t] {
				found[t] = true
				occurrences++
			}
		}
		if occurrences == 0 {
			continue
		}
		tier := 1
		if len(found) == len(want) {
			tier = 2
			if len(want) > 1 && hasPhrase(terms, pos, qterms, qpos) {
				tier = 3
			}
		}
		score := float64(occurrences) / math.Sqrt(float64(len(terms)))
		all = append(all, ranked{Hit{d.ID, score}, tier, newer(d.ID)})
	}
	slices.SortFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.tier, a.tier), cmp.Compare(b.Score, a.Score),
			cmp.Compare(b.order, a.order), cmp.Compare(b.ID, a.ID))
	})
	hits := make([]Hit, 0, min(limit, len(all)))
	for _, r := range all[:min(limit, len(all))] {
		hits = append(hits, r.Hit)
	}
	return hits
}

// hasPhrase reports whether the doc holds the query's terms at the same
// relative positions (stop words between them count, as in a phrase query).
func hasPhrase(terms []string, pos []int, qterms []string, qpos []int) bool {
	at := make(map[int]string, len(terms))
	for i, t := range terms {
		at[pos[i]] = t
	}
	for i, t := range terms {
		if t != qterms[0] {
			continue
		}
		ok := true
		for j := 1; j < len(qterms) && ok; j++ {
			ok = at[pos[i]+qpos[j]-qpos[0]] == qterms[j]
		}
		if ok {
			return true
		}
	}
	return false
}
