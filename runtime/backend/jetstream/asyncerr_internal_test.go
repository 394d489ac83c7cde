package jetstream

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestAsyncErrorsGoToWarn: the connection's asynchronous errors reach the
// warning hook (not stderr), but a watch's vanished consumer, which the
// library recreates, is not reported.
func TestAsyncErrorsGoToWarn(t *testing.T) {
	var got []string
	h := asyncErrors(func(s string) { got = append(got, s) })
	h(nil, nil, nats.ErrConsumerNotFound)
	h(nil, &nats.Subscription{Subject: "x.y"}, errors.Join(errors.New("wrapped"), nats.ErrConsumerNotFound))
	h(nil, &nats.Subscription{Subject: "x.y"}, nats.ErrSlowConsumer)
	if len(got) != 1 || got[0] != "cluster: "+nats.ErrSlowConsumer.Error()+" (subscription x.y)" {
		t.Fatalf("warnings %q", got)
	}
	asyncErrors(nil)(nil, nil, nats.ErrSlowConsumer) // no hook: nothing, no panic
}
