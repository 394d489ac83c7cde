package llmtest

// anthropicEvents renders the reply as an Anthropic Messages stream.
// Placeholder until the Anthropic wire lands: an error event.
func (r Reply) anthropicEvents(id, model string) ([]sseEvent, int) {
	return []sseEvent{{name: "error", data: `{"type":"error","error":{"type":"api_error","message":"llmtest: anthropic wire not implemented"}}`}}, 1
}
