package commands

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/openheim/openheim/runtime/redact"
)

// logRedactor masks the loaded config's secrets in every log record; it is
// set once the config is read (IOStreams.useRedactor), after logging was
// set up.
var logRedactor atomic.Pointer[redact.Redactor]

// setupLogging sends log/slog to stderr (stdout is for answers and
// protocols) at the level named by OPENHEIM_LOG: debug, info, warn (the
// default) or error. Times are left out: the lines sit next to a human's
// prompt, and scripts that need times have the NDJSON. Every record passes
// the config's redactor (retry warnings quote provider errors, MCP servers'
// stderr is relayed at info level).
func setupLogging(w io.Writer) {
	level := slog.LevelWarn
	switch strings.ToLower(os.Getenv("OPENHEIM_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "error":
		level = slog.LevelError
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	slog.SetDefault(slog.New(redact.Handler(h, logRedactor.Load)))
}
