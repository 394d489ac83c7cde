package memory

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// vectors.jsonl holds note embeddings, one JSON record a line, appended
// (fsynced) as notes get embedded:
//
//	{"id":5,"rev":8,"model":"text-embedding-3-small","vec":"<base64>"}
//
// rev is the seq of the note record that was embedded, so a vector is
// valid only while the note still has that content (compaction keeps
// seqs) and only for its model. vec is the little-endian float32s in
// base64: a third the size of JSON numbers, and exact. The latest record
// per id wins; compaction drops invalid ones.
//
// All vectors are held in memory for brute-force cosine similarity: at
// 1,536 dimensions that is 6 KB per note, fine for the tens of thousands
// of notes a person's memory holds.
const vecName = "vectors.jsonl"

type vecRecord struct {
	ID    int64  `json:"id"`
	Rev   int64  `json:"rev"`
	Model string `json:"model"`
	Vec   string `json:"vec"`
}

type vector struct {
	rev   int64
	model string
	unit  []float32 // scaled to length 1: cosine similarity is a dot product
}

type vecStore struct {
	file    *jsonlFile
	byID    map[int64]vector
	records int
	warn    func(string)
}

func (s *vecStore) reset(int64) {
	s.byID = make(map[int64]vector)
	s.records = 0
}

// refresh reads the vectors others appended (all of them the first time:
// the file is read only by a Memory with an Embedder).
func (s *vecStore) refresh() error {
	if s.byID == nil {
		s.reset(0)
	}
	return s.file.refresh(s.reset, s.consume, s.warn)
}

func (s *vecStore) consume(line []byte, off int64) {
	var r vecRecord
	raw, err := []byte(nil), json.Unmarshal(line, &r)
	if err == nil {
		raw, err = base64.StdEncoding.DecodeString(r.Vec)
	}
	if err != nil || r.ID <= 0 || len(raw) == 0 || len(raw)%4 != 0 {
		s.warn(fmt.Sprintf("memory: %s: skipping a damaged record at byte %d", vecName, off))
		return
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	s.records++
	s.byID[r.ID] = vector{rev: r.Rev, model: r.Model, unit: normalize(v)}
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return v
}

func dot(a, b []float32) float64 {
	var sum float32
	for i := range a {
		sum += a[i] * b[i]
	}
	return float64(sum)
}

// valid returns note id's vector if it was made from content rev by model.
func (s *vecStore) valid(id, rev int64, model string) ([]float32, bool) {
	v, ok := s.byID[id]
	if !ok || v.rev != rev || v.model != model {
		return nil, false
	}
	return v.unit, true
}

// write appends vectors (fsynced) and consumes them. The caller holds the
// exclusive lock and has refreshed.
func (s *vecStore) write(model string, ids, revs []int64, vecs [][]float32) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, v := range vecs {
		if err := enc.Encode(encodeVec(ids[i], revs[i], model, v)); err != nil {
			return err
		}
	}
	if err := s.file.append(buf.Bytes()); err != nil {
		return fmt.Errorf("memory: writing %s: %w", vecName, err)
	}
	return s.refresh()
}

// compact rewrites the file with only the vectors valid for the live notes
// and model, when invalid ones are at least compactMin and outnumber them.
// The caller holds the exclusive lock and has refreshed both files.
func (s *vecStore) compact(notes *noteTable, model string, force bool) error {
	var keep []int64
	for id, e := range notes.all() {
		if _, ok := s.valid(id, e.rev, model); ok {
			keep = append(keep, id)
		}
	}
	dead := s.records - len(keep)
	if dead == 0 || !force && (dead < compactMin || dead < len(keep)) {
		return nil
	}
	err := s.file.replace(func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		for _, id := range keep {
			v := s.byID[id]
			if err := enc.Encode(encodeVec(id, v.rev, v.model, v.unit)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory: compacting %s: %w", vecName, err)
	}
	return s.refresh()
}

func encodeVec(id, rev int64, model string, v []float32) vecRecord {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return vecRecord{ID: id, Rev: rev, Model: model, Vec: base64.StdEncoding.EncodeToString(raw)}
}
