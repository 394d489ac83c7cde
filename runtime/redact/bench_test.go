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
