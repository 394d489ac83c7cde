package sessions

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search/query"
)

// DefaultSearchLimit is the number of sessions Search returns for limit <= 0.
const DefaultSearchLimit = 20

// ErrEmptyQuery is returned by Search for an empty or blank query.
var ErrEmptyQuery = errors.New("sessions index: empty query")

func kindQuery(kind string) query.Query {
	q := query.NewTermQuery(kind)
	q.SetField("kind")
	return q
}

// List returns session documents, newest UpdatedAt first, read entirely from
// stored fields so no session store is touched.
//
// Sorting is the cost: bleve reads the sort field's doc values and the
// external id (the tie-break) of every matching document (about 3 µs each,
// 30 ms for 10,000 sessions). With a Limit, List therefore first narrows to
// recent windows (an hour, 8 hours, 64 hours, ...) and sorts only the first
// window holding Limit sessions; being a suffix of the timeline, its newest
// Limit are the overall newest Limit. Counting a window is cheap (no sort),
// so starting small costs a heavy user nothing and saves sorting a whole
// day of sessions.
func (x *Index) List(f Filter) ([]Session, error) {
	if f.Limit > 0 {
		for w := firstWindow; w <= lastWindow; w *= 8 {
			since := time.Now().Add(-w)
			if !since.After(f.Since) {
				break // the caller's own bound is narrower
			}
			q := listQuery(f.Cwd, since)
			n, err := x.count(q)
			if err != nil {
				return nil, err
			}
			if n >= f.Limit {
				return x.fetch(q, f.Limit)
			}
		}
	}
	q := listQuery(f.Cwd, f.Since)
	size := f.Limit
	if size <= 0 {
		// Counting first sizes the one sort exactly; paging instead would
		// re-sort every matching document for every page.
		n, err := x.count(q)
		if err != nil || n == 0 {
			return nil, err
		}
		size = n
	}
	return x.fetch(q, size)
}

const (
	firstWindow = time.Hour
	lastWindow  = 8 * 8 * 8 * 8 * 8 * 8 * firstWindow // ~30 years; beyond, sort everything
)

func listQuery(cwd string, since time.Time) query.Query {
	conj := []query.Query{kindQuery(kindSession)}
	if cwd != "" {
		q := query.NewTermQuery(cwd)
		q.SetField("cwd")
		conj = append(conj, q)
	}
	if !since.IsZero() {
		incl := true
		q := query.NewDateRangeInclusiveQuery(since, time.Time{}, &incl, nil)
		q.SetField("updated")
		conj = append(conj, q)
	}
	return query.NewConjunctionQuery(conj)
}

func (x *Index) count(q query.Query) (int, error) {
	req := bleve.NewSearchRequestOptions(q, 0, 0, false)
	req.Score = "none"
	res, err := x.b.Search(req)
	if err != nil {
		return 0, err
	}
	return int(res.Total), nil
}

func (x *Index) fetch(q query.Query, size int) ([]Session, error) {
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.SortBy([]string{"-updated", "_id"}) // _id: a stable order for ties
	req.Fields = storedSessionFields
	req.Score = "none"
	res, err := x.b.Search(req)
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(res.Hits))
	for _, h := range res.Hits {
		s, err := decodeSession(h.ID, h.Fields)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Get returns one session by id; ok is false when it is not indexed.
func (x *Index) Get(id string) (s Session, ok bool, err error) {
	req := bleve.NewSearchRequestOptions(query.NewDocIDQuery([]string{sessionDocID(id)}), 1, 0, false)
	req.Fields = storedSessionFields
	req.Score = "none"
	res, err := x.b.Search(req)
	if err != nil || len(res.Hits) == 0 {
		return Session{}, false, err
	}
	s, err = decodeSession(res.Hits[0].ID, res.Hits[0].Fields)
	return s, err == nil, err
}

// Count returns the number of indexed sessions (messages not counted).
func (x *Index) Count() (int, error) { return x.count(kindQuery(kindSession)) }

// Search finds sessions whose messages or title match query and returns each
// session once, with its best-matching message, best first.
//
// Ranking is in strict tiers rather than boosts, because tf-idf lets a doc
// that repeats one rare word outscore a doc holding every word: first docs
// containing the exact phrase, then docs containing all words, then docs
// containing any; within a tier by score, then by the session's UpdatedAt
// (newer first).
func (x *Index) Search(q string, limit int) ([]Hit, error) {
	if strings.TrimSpace(q) == "" {
		return nil, ErrEmptyQuery
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	terms, err := x.countTerms(q)
	if err != nil || terms == 0 {
		// Only stop words ("the", "to"): the analyzer leaves nothing to find.
		return nil, err
	}
	var tiers []query.Query
	if terms > 1 {
		tiers = append(tiers,
			bothFields(func(field string) query.Query {
				p := query.NewMatchPhraseQuery(q)
				p.SetField(field)
				return p
			}),
			bothFields(func(field string) query.Query { return matchQuery(q, field, query.MatchQueryOperatorAnd) }))
	}
	tiers = append(tiers, bothFields(func(field string) query.Query { return matchQuery(q, field, query.MatchQueryOperatorOr) }))

	seen := make(map[string]bool)
	var hits []Hit
	for _, t := range tiers {
		best, err := x.bestPerSession(t, limit-len(hits), seen)
		if err != nil {
			return nil, err
		}
		if best, err = x.byRecency(best, limit-len(hits)); err != nil {
			return nil, err
		}
		for _, h := range best {
			seen[h.SessionID] = true
		}
		if hits = append(hits, best...); len(hits) >= limit {
			break
		}
	}
	return hits, nil
}

func bothFields(mk func(field string) query.Query) query.Query {
	return query.NewDisjunctionQuery([]query.Query{mk("text"), mk("title")})
}

func matchQuery(q, field string, op query.MatchQueryOperator) query.Query {
	m := query.NewMatchQuery(q)
	m.SetField(field)
	m.SetOperator(op)
	return m
}

// countTerms runs the fields' own analyzer so "all words" and "phrase" mean
// the same words the index holds (stop words dropped, stems folded).
func (x *Index) countTerms(q string) (int, error) {
	a := x.b.Mapping().AnalyzerNamed(en.AnalyzerName)
	if a == nil {
		return 0, errors.New("sessions index: analyzer en missing")
	}
	distinct := make(map[string]bool)
	for _, tok := range a.Analyze([]byte(q)) {
		distinct[string(tok.Term)] = true
	}
	return len(distinct), nil
}

// maxTies bounds how many extra sessions tied with the last place Search
// reads to break the tie by recency ("please continue" can match thousands
// of identical messages); beyond it, the order among them is arbitrary.
const maxTies = 1000

// bestPerSession returns, in score order, each not yet seen session's best
// hit until it has need sessions plus every session tied with the last of
// them. Pages are larger than need because one session often has many
// matching messages.
func (x *Index) bestPerSession(q query.Query, need int, seen map[string]bool) ([]Hit, error) {
	page := max(4*need, 64)
	var out []Hit
	inTier := make(map[string]bool)
	for from := 0; ; from += page {
		req := bleve.NewSearchRequestOptions(q, page, from, false)
		req.SortBy([]string{"-_score", "_id"}) // stable pages among equal scores
		res, err := x.b.Search(req)
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			id, n, ok := parseDocID(h.ID)
			if !ok || seen[id] || inTier[id] {
				continue
			}
			if len(out) >= need && (h.Score < out[need-1].Score || len(out) >= need+maxTies) {
				return out, nil
			}
			inTier[id] = true
			out = append(out, Hit{SessionID: id, Message: n, Score: h.Score})
		}
		if len(res.Hits) < page {
			return out, nil
		}
	}
}

// byRecency orders hits of equal score newest session first (by the session
// docs' updated, read in one sorted query) and keeps the first need.
func (x *Index) byRecency(hits []Hit, need int) ([]Hit, error) {
	if len(hits) > 1 {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = sessionDocID(h.SessionID)
		}
		req := bleve.NewSearchRequestOptions(query.NewDocIDQuery(ids), len(ids), 0, false)
		// Sessions without a session doc (messages indexed first) sort last.
		req.SortBy([]string{"-updated", "_id"})
		req.Score = "none"
		res, err := x.b.Search(req)
		if err != nil {
			return nil, err
		}
		rank := make(map[string]int, len(res.Hits))
		for i, h := range res.Hits {
			id, _, _ := parseDocID(h.ID)
			rank[id] = i + 1
		}
		pos := func(id string) int {
			if r, ok := rank[id]; ok {
				return r
			}
			return len(hits) + 1
		}
		slices.SortStableFunc(hits, func(a, b Hit) int {
			if a.Score != b.Score {
				return cmp.Compare(b.Score, a.Score)
			}
			return cmp.Or(cmp.Compare(pos(a.SessionID), pos(b.SessionID)), strings.Compare(a.SessionID, b.SessionID))
		})
	}
	return hits[:min(need, len(hits))], nil
}
