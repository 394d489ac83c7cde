package ws

import (
	"encoding/json"
	"net/http"
)

// writeError answers a refused upgrade with the REST error shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
