package jetstream

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestInProcessRetried: an append whose earlier attempt is still being
// stored (10158, seen under load in serve-cluster.sh) is tried again,
// not failed; another conflict is not.
func TestInProcessRetried(t *testing.T) {
	conflict := fmt.Errorf("publish: %w", &jetstream.APIError{Code: 409, ErrorCode: errCodeDuplicateInProcess, Description: "duplicate message id is in process"})
	if !inProcess(conflict) {
		t.Error("10158 is not retried")
	}
	if inProcess(&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}) || inProcess(fmt.Errorf("other")) {
		t.Error("other errors are taken for 10158")
	}
}
