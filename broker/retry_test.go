package broker_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Every quorum queue of the vhost under delayed retry, by argument or by
// policy, with what it holds. Each queue gets two messages, handed back
// one by reject and one by nack, which measures what each type delays on
// 4.3: failed holds the rejected one only (the nacked one is ready again
// at once), returned the nacked one only, all both. 3.10 and 4.0 have no
// delayed retry: they refuse the policy, ignore the arguments (both
// messages ready again) and RetryQueues asks the broker nothing.
func TestRetryQueuesOnRealBroker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ver, err := e.mgmt.Version(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	hold := brokertest.DelayedRetryHold.Milliseconds()
	code := brokertest.PutPolicy(t, e.cfg, "retry", fmt.Sprintf(`{"pattern":"^by-policy$","apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":%d,"delayed-retry-max":%d}}`, hold, 2*hold))
	if want := map[bool]int{true: http.StatusCreated, false: http.StatusBadRequest}[ver.QuorumDelayedRetryPolicy()]; code != want {
		t.Fatalf("%v: policy with delayed-retry keys answered %d, want %d", ver, code, want)
	}
	ch := brokertest.RawChannel(t, e.cfg)
	declare := func(name string, args amqp.Table) {
		t.Helper()
		a := amqp.Table{"x-queue-type": "quorum"}
		for k, v := range args {
			a[k] = v
		}
		if _, err := ch.QueueDeclare(name, true, false, false, false, a); err != nil {
			t.Fatal(err)
		}
	}
	declare("by-arg-failed", amqp.Table{"x-delayed-retry-type": "failed", "x-delayed-retry-min": hold, "x-delivery-limit": 5})
	declare("by-arg-returned", amqp.Table{"x-delayed-retry-type": "returned", "x-delayed-retry-min": hold})
	declare("by-policy", nil)
	declare("plain", nil)
	for _, q := range []string{"by-arg-failed", "by-arg-returned", "by-policy"} {
		brokertest.PublishTo(t, e.cfg, q, 2)
		brokertest.Reject(t, e.cfg, q)
		brokertest.Nack(t, e.cfg, q)
	}
	if !ver.QuorumDelayedRetry() {
		r0, _ := e.mgmt.Cost()
		qs, err := e.mgmt.RetryQueues(ctxFor(t, 10*time.Second), e.vhost, ver)
		if r1, _ := e.mgmt.Cost(); err != nil || qs != nil || r1 != r0 {
			t.Fatalf("%v: RetryQueues = %+v, %v after %d requests; want none and no request", ver, qs, err, r1-r0)
		}
		if h, err := ops.ReadRetryListed(ctxFor(t, 10*time.Second), e.mgmt, e.vhost, ver, nil); err != nil || h.Read || len(h.Queues) != 0 {
			t.Fatalf("%v: ReadRetryListed = %+v, %v; want nothing read", ver, h, err)
		}
		if r1, _ := e.mgmt.Cost(); r1 != r0 {
			t.Fatalf("%v: %d requests, want none", ver, r1-r0)
		}
		s := brokertest.AwaitStats(t, e.cfg, "by-arg-failed", func(s topology.QueueStats) bool { return s.Ready == 2 })
		if s.Ready != 2 || s.Delayed != 0 {
			t.Errorf("%v: by-arg-failed %+v, want both messages ready again", ver, s)
		}
		return
	}
	// The figures the broker reports after both hand-backs.
	want := map[string]topology.RetryQueue{
		"by-arg-failed":   {Name: "by-arg-failed", Type: "failed", Min: brokertest.DelayedRetryHold, Source: "argument", Delayed: 1, Reported: true, Ready: 1, DeliveryLimit: 5, LimitKnown: true},
		"by-arg-returned": {Name: "by-arg-returned", Type: "returned", Min: brokertest.DelayedRetryHold, Source: "argument", Delayed: 1, Reported: true, Ready: 1, DeliveryLimit: 20, LimitKnown: true},
		"by-policy":       {Name: "by-policy", Type: "all", Min: brokertest.DelayedRetryHold, Max: 2 * brokertest.DelayedRetryHold, Source: "policy", Policy: "retry", Delayed: 2, Reported: true, DeliveryLimit: 20, LimitKnown: true},
	}
	testutil.Eventually(t, 20*time.Second, "the queues under delayed retry and what they hold", func() error {
		qs, err := e.mgmt.RetryQueues(ctxFor(t, 10*time.Second), e.vhost, ver)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != len(want) {
			return fmt.Errorf("%v: %+v, want %d queues", ver, qs, len(want))
		}
		for _, q := range qs {
			if q != want[q.Name] {
				return fmt.Errorf("%v: %+v, want %+v", ver, q, want[q.Name])
			}
		}
		return nil
	})
	// The same found in the inventory's listing of every queue, as
	// discover --delays and doctor read it: the same figures, from the
	// listing itself once the broker has gathered the queues' statistics
	// (the policies and nothing more: two requests).
	testutil.Eventually(t, 20*time.Second, "the same from the listing of every queue", func() error {
		_, snap, err := ops.Delays(ctxFor(t, 10*time.Second), e.mgmt, e.vhost, nil)
		if err != nil {
			t.Fatal(err)
		}
		r0, _ := e.mgmt.Cost()
		h, err := ops.ReadRetryListed(ctxFor(t, 10*time.Second), e.mgmt, e.vhost, ver, snap.Queues)
		r1, _ := e.mgmt.Cost()
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Queues) != len(want) || r1-r0 != 2 {
			return fmt.Errorf("%v: %+v after %d requests, want %d queues after 2", ver, h.Queues, r1-r0, len(want))
		}
		for _, q := range h.Queues {
			if q != want[q.Name] {
				return fmt.Errorf("%v: %+v, want %+v", ver, q, want[q.Name])
			}
		}
		return nil
	})
}
