package config

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/message"
)

// TestPrices: the price table loads by "provider/model", prices tokens
// per million (a cache price left out is the input price), and refuses
// keys that name no provider and negative prices, naming the key.
func TestPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`[prices."openai/gpt-4o"]
input = 2.5
output = 10
cache_read = 1.25
[prices."anthropic/claude-x"]
input = 3
output = 15
`), 0o600)
	c, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.PriceOf("openai/gpt-4o")
	u := message.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 200_000, CacheCreationTokens: 10_000}
	if cost := p.Cost(u); !ok || math.Abs(cost-(2.5+1+0.25+0.025)) > 1e-9 {
		t.Errorf("gpt-4o: %v %v", cost, ok)
	}
	if q, ok := c.PriceOf("anthropic/claude-x"); !ok || math.Abs(q.Cost(message.Usage{CacheCreationTokens: 1_000_000})-3) > 1e-9 {
		t.Errorf("claude-x: %+v", q)
	}
	if _, ok := c.PriceOf("openai/unpriced"); ok {
		t.Error("an unpriced model has a price")
	}
	for _, tt := range []struct{ toml, want string }{
		{"[prices.gpt-4o]\ninput = 1\noutput = 1\n", `config: prices."gpt-4o": a price is for "provider/model"`},
		{"[prices.\"a/b\"]\ninput = -1\noutput = 1\n", `config: prices."a/b".input: must be a price of at least 0`},
		{"[prices.\"a/b\"]\ninput = 1\noutput = 1\ncache_write = -2\n", `prices."a/b".cache_write`},
	} {
		os.WriteFile(path, []byte(tt.toml), 0o600)
		if _, err := LoadWith(path, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.toml, err, tt.want)
		}
	}
}
