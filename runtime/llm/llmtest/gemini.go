package llmtest

// geminiEvents renders the reply as a Gemini streamGenerateContent stream.
// Placeholder until the Gemini wire lands.
func (r Reply) geminiEvents(model string, n int) ([]sseEvent, int) {
	return []sseEvent{{data: `{"error":{"code":500,"message":"llmtest: gemini wire not implemented"}}`}}, 1
}
