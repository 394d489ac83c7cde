package embedding

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/openheim/openheim/runtime/llm/transport"
)

// geminiAPI is the Gemini API root used when Config.BaseURL is empty, and
// the header its key travels in.
var geminiAPI = transport.API{BaseURL: "https://generativelanguage.googleapis.com/v1beta", KeyHeader: "x-goog-api-key"}

type gemEmbedPart struct {
	Text string `json:"text"`
}

type gemEmbedContent struct {
	Parts []gemEmbedPart `json:"parts"`
}

type gemEmbedItem struct {
	Model   string          `json:"model"`
	Content gemEmbedContent `json:"content"`
}

// gemEmbedRequest is the body of POST models/{model}:batchEmbedContents.
type gemEmbedRequest struct {
	Requests []gemEmbedItem `json:"requests"`
}

type gemEmbedResponse struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
}

// newGeminiEmbed returns the batch call of the Gemini batchEmbedContents
// wire. The key travels in the x-goog-api-key header, never in the URL,
// where it would end up in proxy logs and error messages.
func newGeminiEmbed(cfg Config, h *transport.JSONClient) embedBatchFunc {
	name := strings.TrimPrefix(strings.TrimSpace(cfg.Model), "models/")
	endpoint := transport.Endpoint(geminiAPI.Base(cfg.BaseURL), "/models/"+url.PathEscape(name)+":batchEmbedContents", "")
	model := "models/" + name
	auth := geminiAPI.Header(cfg.APIKey, cfg.Headers)
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		req := gemEmbedRequest{Requests: make([]gemEmbedItem, len(texts))}
		for i, t := range texts {
			req.Requests[i] = gemEmbedItem{Model: model, Content: gemEmbedContent{Parts: []gemEmbedPart{{Text: t}}}}
		}
		var resp gemEmbedResponse
		if err := h.Post(ctx, endpoint, auth, req, &resp); err != nil {
			return nil, err
		}
		if len(resp.Embeddings) != len(texts) {
			return nil, fmt.Errorf("server returned %d vectors for %d texts", len(resp.Embeddings), len(texts))
		}
		out := make([][]float32, len(texts))
		for i, e := range resp.Embeddings {
			out[i] = e.Values
		}
		return out, nil
	}
}
