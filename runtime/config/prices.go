package config

import (
	"math"
	"strings"

	"github.com/openheim/openheim/runtime/message"
)

// Price is what a model's tokens cost, in US dollars per million tokens
// (a [prices."provider/model"] table). A cache price left out is the
// input price.
type Price struct {
	Input      float64  `toml:"input"`
	Output     float64  `toml:"output"`
	CacheRead  *float64 `toml:"cache_read"`
	CacheWrite *float64 `toml:"cache_write"`
}

// Cost is the price of u in US dollars.
func (p Price) Cost(u message.Usage) float64 {
	read, write := p.Input, p.Input
	if p.CacheRead != nil {
		read = *p.CacheRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*read + float64(u.CacheCreationTokens)*write) / 1e6
}

// PriceOf is the price of model ("provider/model"), if the config has one.
func (c *Config) PriceOf(model string) (Price, bool) {
	p, ok := c.Prices[model]
	if !ok || p == nil {
		return Price{}, false
	}
	return *p, true
}

// validatePrices checks the price table: "provider/model" keys, prices
// that are numbers of dollars, none negative.
func (c *Config) validatePrices() error {
	for _, model := range sortedKeys(c.Prices) {
		p := c.Prices[model]
		key := `prices."` + model + `"`
		if provider, name, ok := strings.Cut(model, "/"); !ok || provider == "" || name == "" {
			return keyErr(key, `a price is for "provider/model" (as /v1/sessions shows a session's model)`)
		}
		if p == nil {
			return keyErr(key, "needs input and output (US dollars per million tokens)")
		}
		for _, f := range []struct {
			name string
			v    *float64
		}{{"input", &p.Input}, {"output", &p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
				return keyErr(key+"."+f.name, "must be a price of at least 0 (US dollars per million tokens)")
			}
		}
	}
	return nil
}
