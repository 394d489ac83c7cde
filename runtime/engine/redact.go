package engine

import "github.com/openheim/openheim/runtime/redact"

// Redactor masks the config's secrets (config.Config.Secrets) in text the
// engine and its front ends send out: turn errors, cassettes, MCP status,
// API answers. It is built on first use and kept; nil when the config holds
// no secrets.
func (e *Engine) Redactor() *redact.Redactor {
	if e == nil {
		return nil
	}
	e.redactOnce.Do(func() {
		if e.Config != nil {
			e.redactor = e.Config.Redactor()
		}
	})
	return e.redactor
}
