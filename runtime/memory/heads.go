package memory

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
)

// notes.heads caches what reading the log's heads yields (where each live
// note's record is, the deletions, the last seq and next id) up to a byte
// offset, so a new process reads only what was appended since instead of
// the whole log: at 100,000 notes, ~3 MB in a few ms against 30 MB and
// ~80 ms. It is derived data, never the truth: it is used only when the log
// still starts with the same first line and holds the same bytes just
// before that offset (a compaction rewrites the first line as a new base
// record; a replaced or truncated log fails the check), and a torn or
// foreign file fails its checksum. A missing or unusable cache costs one
// full read, which writes a fresh one.
const headsName = "notes.heads"

var headsMagic = []byte("OHMHEAD1")

const (
	headsFirstMax = 256      // bytes of the log's first line kept to recognise it
	headsTail     = 64       // bytes before the offset kept to recognise it
	headsEvery    = 4 << 20  // rewrite the cache once this much more log was read
	headsMaxSize  = 64 << 20 // refuse absurd cache files
)

// headsMinLog: smaller logs are read whole in about a millisecond, and
// get no cache (a variable for tests).
var headsMinLog int64 = 1 << 20

func (l *noteLog) headsPath() string {
	return filepath.Join(filepath.Dir(l.file.path), headsName)
}

// identity returns the bytes that recognise the log up to size: the start
// of its first line and the bytes just before size.
func identity(f *os.File, size int64) (first, tail []byte, ok bool) {
	first = make([]byte, min(size, headsFirstMax))
	if _, err := f.ReadAt(first, 0); err != nil {
		return nil, nil, false
	}
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i+1]
	}
	tail = make([]byte, min(size, headsTail))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, nil, false
	}
	return first, tail, true
}

// saveHeads writes the cache for the log as consumed so far, atomically
// (temp file, rename) but without fsync: losing it costs a full read.
func (l *noteLog) saveHeads() {
	f, size := l.file.f, l.file.size
	if f == nil || size < headsMinLog {
		return
	}
	first, tail, ok := identity(f, size)
	if !ok {
		return
	}
	buf := make([]byte, 0, 64+len(first)+len(tail)+l.notes.len()*headsRecord+len(l.deletes)*16)
	buf = append(buf, headsMagic...)
	for _, v := range []int64{size, l.lastSeq, l.nextID, int64(l.records), int64(len(first)), int64(len(tail)), int64(l.notes.len()), int64(len(l.deletes))} {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
	}
	buf = append(append(buf, first...), tail...)
	type rec struct {
		id int64
		e  entry
	}
	recs := make([]rec, 0, l.notes.len())
	for id, e := range l.notes.all() {
		recs = append(recs, rec{id, e})
	}
	// Ascending ids: a process starting from the cache binary-searches it.
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.id, b.id) })
	for _, r := range recs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.id))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.e.rev))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.e.off))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(r.e.n))
	}
	for _, d := range l.deletes {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(d.id))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(d.seq))
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	f, err := os.CreateTemp(filepath.Dir(l.headsPath()), headsName+".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err != nil || cerr != nil || os.Rename(f.Name(), l.headsPath()) != nil {
		_ = os.Remove(f.Name())
		return
	}
	l.headsAt = size
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errHeads = errors.New("unusable heads cache")

// loadHeads restores the log's state from the cache onto f, the log just
// opened (size bytes), and returns the offset it covers; the caller reads
// on from there. Any mismatch returns errHeads and leaves l as reset left it.
func (l *noteLog) loadHeads(f *os.File, size int64) (int64, error) {
	data, unmap, err := mapFile(l.headsPath())
	if err != nil {
		return 0, errHeads
	}
	at, err := l.useHeads(f, size, data, unmap)
	if err != nil {
		unmap()
	}
	return at, err
}

// useHeads validates data, the cache's bytes, and makes its records the
// table; the table owns unmap from then on.
func (l *noteLog) useHeads(f *os.File, size int64, data []byte, unmap func()) (int64, error) {
	if len(data) < len(headsMagic)+8*8+4 || !bytes.HasPrefix(data, headsMagic) {
		return 0, errHeads
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return 0, errHeads
	}
	r := body[len(headsMagic):]
	var h [8]int64
	for i := range h {
		h[i] = int64(binary.LittleEndian.Uint64(r))
		r = r[8:]
	}
	at, lastSeq, nextID, records, nFirst, nTail, nNotes, nDel := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	if at <= 0 || at > size || nFirst < 0 || nTail < 0 || nNotes < 0 || nDel < 0 ||
		int64(len(r)) != nFirst+nTail+nNotes*headsRecord+nDel*16 {
		return 0, errHeads
	}
	first, tail, ok := identity(f, at)
	if !ok || !bytes.Equal(first, r[:nFirst]) || !bytes.Equal(tail, r[nFirst:nFirst+nTail]) {
		return 0, errHeads
	}
	r = r[nFirst+nTail:]
	// The records become the table as they are: checked, not copied.
	base := r[:nNotes*headsRecord]
	prev := int64(-1 << 63)
	for i := range int(nNotes) {
		id, e := baseRecord(base, i)
		if id <= prev || e.n <= 0 || e.off < 0 || e.off+int64(e.n) > at {
			return 0, errHeads
		}
		prev = id
	}
	r = r[nNotes*headsRecord:]
	deletes := make([]deletion, nDel)
	for i := range deletes {
		deletes[i] = deletion{int64(binary.LittleEndian.Uint64(r)), int64(binary.LittleEndian.Uint64(r[8:]))}
		r = r[16:]
	}
	l.notes = withBase(base, unmap)
	l.deletes, l.lastSeq, l.nextID, l.records = deletes, lastSeq, nextID, int(records)
	l.headsAt, l.resumed = at, at
	return at, nil
}
