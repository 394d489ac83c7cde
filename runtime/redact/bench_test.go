package redact

import (
	"fmt"
	"strings"
	"testing"
)

// An NDJSON line of ~300 bytes and a 20-secret config: the cost the
// encoders pay per line. Floor: one strings.Contains per secret, the least
// any scan for 20 values can do.
var (
	benchLine    = `{"sessionId":"1f28274d-efc7-469c-8473-3bd4ba512dd2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("the quick brown fox jumps ", 8) + `"}}}`
	benchSecrets = func() []string {
		var s []string
		for i := range 20 {
			s = append(s, fmt.Sprintf("sk-bench-%02d-9f8e7d6c5b4a", i))
		}
		return s
	}()
)

func BenchmarkStringNoMatch(b *testing.B) {
	r := New(benchSecrets...)
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		if r.String(benchLine) != benchLine {
			b.Fatal("changed")
		}
	}
}

func BenchmarkStringMatch(b *testing.B) {
	r := New(benchSecrets...)
	line := benchLine + benchSecrets[7]
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		r.String(line)
	}
}

func BenchmarkFloorContains(b *testing.B) {
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		for _, s := range benchSecrets {
			if strings.Contains(benchLine, s) {
				b.Fatal("found")
			}
		}
	}
}

func BenchmarkNilRedactor(b *testing.B) {
	var r *Redactor
	for b.Loop() {
		r.String(benchLine)
	}
}

// BenchmarkStreamPush: the cost per streamed chunk of masking across
// chunks, with a config's usual secrets (two API keys) and chunks of a
// few words; against BenchmarkStreamFloor, the same chunks copied.
func BenchmarkStreamPush(b *testing.B) {
	s := New("sk-proj-3Fa9kL2mQ8xZ7vB1nC4d", "AIzaSyD-9tSrke72PouQMnMX7agiiX0kLbbb").Stream()
	chunks := []string{"The answer ", "is in the ", "file notes.txt; ", "see line 4", " of it.\n"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Push(chunks[i%len(chunks)])
	}
}

func BenchmarkStreamFloor(b *testing.B) {
	chunks := []string{"The answer ", "is in the ", "file notes.txt; ", "see line 4", " of it.\n"}
	var sink string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sink = string([]byte(chunks[i%len(chunks)]))
	}
	_ = sink
}
