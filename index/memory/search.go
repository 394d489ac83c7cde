package memory

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Hit is one note found by Search or Scan.
type Hit struct {
	ID int64
	// Score is the relevance within the hit's tier (see Search); hits come
	// in rank order, which is not always descending Score.
	Score float64
}

// Recency orders notes for breaking score ties: a larger value is newer.
// Nil means the id (notes are numbered in creation order).
type Recency func(id int64) int64

// ErrEmptyQuery is returned for an empty or blank query.
var ErrEmptyQuery = errors.New("memory index: empty query")

// maxTies bounds how many notes tied with the last place Search examines
// to pick the newest; beyond, the order among them is arbitrary.
const maxTies = 1000

// Search returns up to limit notes matching q, best first.
//
// Ranking is in strict tiers rather than boosts, because tf-idf lets a
// note that repeats one rare word outscore one holding every word: first
// notes containing the exact phrase, then notes containing all the words,
// then notes containing any; within a tier by score, then newest first by
// newer. A query made only of stop words finds nothing.
//
// Bleve sorts by score alone (sorting by a field would read it for every
// match); ties are broken here, among the tied hits only.
func (x *Index) Search(q string, limit int, newer Recency) ([]Hit, error) {
	if strings.TrimSpace(q) == "" {
		return nil, ErrEmptyQuery
	}
	terms, _ := Terms(q)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if newer == nil {
		newer = func(id int64) int64 { return id }
	}
	var tiers []query.Query
	if slices.ContainsFunc(terms, func(t string) bool { return t != terms[0] }) {
		phrase := query.NewMatchPhraseQuery(q)
		phrase.SetField("text")
		tiers = append(tiers, phrase, match(q, query.MatchQueryOperatorAnd))
	}
	tiers = append(tiers, match(q, query.MatchQueryOperatorOr))

	seen := make(map[int64]bool)
	var hits []Hit
	for _, t := range tiers {
		best, err := x.best(t, limit-len(hits), seen, newer)
		if err != nil {
			return nil, err
		}
		for _, h := range best {
			seen[h.ID] = true
		}
		if hits = append(hits, best...); len(hits) == limit {
			break
		}
	}
	return hits, nil
}

// best returns the need best hits of q not in seen: by score, then newer.
// Each tier holds the previous ones' hits (a phrase has all the words), so
// a page of need+len(seen) holds enough new ones, plus a margin for ties
// with the last place; a page that ends in such a tie grows.
func (x *Index) best(q query.Query, need int, seen map[int64]bool, newer Recency) ([]Hit, error) {
	for page := need + len(seen) + 16; ; page *= 4 {
		req := bleve.NewSearchRequestOptions(q, page, 0, false)
		res, err := x.b.Search(req)
		if err != nil {
			return nil, err
		}
		var fresh []Hit
		for _, h := range res.Hits {
			if id, ok := parseDocID(h.ID); ok && !seen[id] {
				fresh = append(fresh, Hit{ID: id, Score: h.Score})
			}
		}
		if len(fresh) <= need {
			return sortHits(fresh, newer), nil
		}
		last := fresh[need-1].Score
		full := len(res.Hits) == page
		if full && res.Hits[len(res.Hits)-1].Score == last && page < need+len(seen)+maxTies {
			continue // the tie may go on past this page
		}
		// Candidates: everything scoring at least the last place.
		n := need
		for n < len(fresh) && fresh[n].Score == last {
			n++
		}
		return sortHits(fresh[:n], newer)[:need], nil
	}
}

func sortHits(hits []Hit, newer Recency) []Hit {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(newer(b.ID), newer(a.ID)), cmp.Compare(b.ID, a.ID))
	})
	return hits
}

func match(q string, op query.MatchQueryOperator) query.Query {
	m := query.NewMatchQuery(q)
	m.SetField("text")
	m.SetOperator(op)
	return m
}
