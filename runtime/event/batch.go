package event

import (
	"strings"
	"sync"
)

// BatchSink is a Sink that takes several events at once: a Queue hands it
// everything queued since its last delivery, so a consumer that fell
// behind catches up in one step rather than one event at a time.
type BatchSink interface {
	Sink
	EmitBatch([]Event)
}

// MaxCoalesced bounds the text of a chunk Coalesce merges: a transport's
// queue, bounded in updates, still fills for a client that stops reading.
const MaxCoalesced = 16 << 10

// Coalesce merges each run of consecutive text chunks of one kind, session
// and summary flag into one chunk holding their texts in order (up to
// MaxCoalesced bytes), in place, and returns the shortened slice. Nothing is lost: a reader sees the same
// text in fewer, larger pieces. A merged chunk gets a new Content; the
// events' own are left as they were.
func Coalesce(evs []Event) []Event {
	out := evs[:0]
	for i := 0; i < len(evs); {
		j, size := i+1, 0
		if evs[i].Content != nil {
			size = len(evs[i].Content.Text)
		}
		for j < len(evs) && mergeable(&evs[i], &evs[j]) && evs[i].Summary == evs[j].Summary &&
			size+len(evs[j].Content.Text) <= MaxCoalesced {
			size += len(evs[j].Content.Text)
			j++
		}
		e := evs[i]
		if j-i > 1 {
			n := 0
			for _, r := range evs[i:j] {
				n += len(r.Content.Text)
			}
			var sb strings.Builder
			sb.Grow(n)
			for _, r := range evs[i:j] {
				sb.WriteString(r.Content.Text)
			}
			c := *e.Content
			c.Text = sb.String()
			e.Content = &c
		}
		out = append(out, e)
		i = j
	}
	clear(evs[len(out):]) // drop references to merged content
	return out
}

// Shared lets the subscribers an event is fanned out to encode it once
// for each wire form: the first to need a form encodes it, the others
// reuse its bytes (which nobody may modify). A hub sets it on an event
// that goes to more than one subscriber; nil means nobody shares.
type Shared struct {
	mu    sync.Mutex
	forms []sharedForm
}

type sharedForm struct {
	key string
	b   []byte
	err error
}

// Encode returns form key's bytes, calling encode the first time; s may
// be nil (encode is then called every time).
func (s *Shared) Encode(key string, encode func() ([]byte, error)) ([]byte, error) {
	if s == nil {
		return encode()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.forms {
		if f.key == key {
			return f.b, f.err
		}
	}
	b, err := encode()
	s.forms = append(s.forms, sharedForm{key: key, b: b, err: err})
	return b, err
}
