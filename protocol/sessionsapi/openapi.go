package sessionsapi

import (
	_ "embed"
	"net/http"
)

// openAPI describes the routes of this package; TestOpenAPIMatchesRoutes
// keeps it in step with routes().
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
