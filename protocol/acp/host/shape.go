package host

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// shape is a JSON message with its content taken out (CaptureMetadata):
// objects keep their keys, lists their first maxShapeItems items, numbers,
// booleans and nulls stay, the values of idKeys stay when short, and every
// other string becomes "<string, N bytes>". What is not JSON becomes
// "<not JSON, N bytes>".
func shape(raw []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return json.RawMessage(fmt.Sprintf(`"<not JSON, %d bytes>"`, len(raw)))
	}
	out, err := json.Marshal(strip(v, ""))
	if err != nil {
		return nil
	}
	return out
}

// idKeys name the ACP and JSON-RPC fields that say what a message is,
// not what it carries.
var idKeys = map[string]bool{"jsonrpc": true, "method": true, "id": true, "sessionId": true, "sessionUpdate": true,
	"type": true, "kind": true, "status": true, "toolCallId": true, "terminalId": true, "optionId": true,
	"outcome": true, "stopReason": true, "mimeType": true, "protocolVersion": true, "currentModeId": true}

const (
	maxShapeItems = 8
	maxIDLen      = 128
)

// strip takes the content out of v, the value of key.
func strip(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = strip(x, k)
		}
		return v
	case []any:
		n := len(v)
		if n > maxShapeItems {
			v = v[:maxShapeItems]
		}
		for i, x := range v {
			v[i] = strip(x, "")
		}
		if n > maxShapeItems {
			v = append(v, fmt.Sprintf("<%d more>", n-maxShapeItems))
		}
		return v
	case string:
		if idKeys[key] && len(v) <= maxIDLen {
			return v
		}
		return fmt.Sprintf("<string, %d bytes>", len(v))
	}
	return v
}
