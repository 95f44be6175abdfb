package health

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// The findings follow the exact release: nothing before 4.3; on 4.3.0 a
// policy's keys are ignored (a warning on the queue it names, a note on
// the release); from 4.3.1 they are honoured. The delivery limit that a
// nacking consumer never reaches is noted on 4.3 only.
func TestRetryFindingsByRelease(t *testing.T) {
	v := func(s string) topology.Version {
		ver, ok := topology.ParseVersion(s)
		if !ok {
			t.Fatal(s)
		}
		return ver
	}
	qs := []topology.RetryQueue{
		{Name: "orders", Type: "all", Min: 2 * time.Second, Max: 4 * time.Second, Source: "policy", Policy: "slow", Delayed: 3, Reported: true, DeliveryLimit: 20, LimitKnown: true},
		{Name: "jobs", Type: "failed", Min: time.Second, Source: "argument", Reported: true},
	}
	text := func(fs []RetryFinding) string {
		var b strings.Builder
		for _, f := range fs {
			b.WriteString(f.Text + "\n")
		}
		return b.String()
	}
	for _, old := range []string{"3.10.8", "4.0.5", "4.2.3"} {
		if fs := RetryFindings(NewRetryHold(qs, true), v(old)); len(fs) != 0 {
			t.Errorf("%s: %s", old, text(fs))
		}
	}

	// 4.3.0: the broker lists the policy's queue as ignored.
	on430 := append([]topology.RetryQueue(nil), qs...)
	on430[0].Ignored = true
	fs := RetryFindings(NewRetryHold(on430, true), v("4.3.0"))
	got := text(fs)
	for _, want := range []string{
		"orders: policy slow sets delayed retry (type all, 2s–4s), but RabbitMQ 4.3.0 ignores delayed-retry keys in policies (rabbitmq-server #16395, fixed in 4.3.1)",
		"RabbitMQ 4.3.0 refuses and ignores delayed-retry keys in policies",
		"jobs: type failed delays basic.reject (and a consumer that leaves) only",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("4.3.0: lacks %q:\n%s", want, got)
		}
	}
	if fs[0].Severity != Warning || fs[0].Info {
		t.Errorf("4.3.0: the ignored policy is not a warning: %+v", fs[0])
	}

	got = text(RetryFindings(NewRetryHold(qs, true), v("4.3.6")))
	for _, want := range []string{
		"orders: delayed retry type all, 2s–4s, set by policy slow; 3 held now",
		"orders: its delivery limit (20) never fires for a consumer that nacks with requeue",
		"RabbitMQ 4.3.6 honours delayed-retry keys in policies",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("4.3.6: lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ignores delayed-retry keys") {
		t.Errorf("4.3.6 said to ignore the policy keys:\n%s", got)
	}
	if got := text(RetryFindings(NewRetryHold(nil, true), v("4.3.6"))); !strings.Contains(got, "no quorum queue has delayed retry") {
		t.Errorf("none: %s", got)
	}
	if h := NewRetryHold(qs, true); h.Delayed != 3 || h.Holding != 1 || h.Queues[0].Name != "orders" || h.Held() != "3 held by delayed retry in 1 queue" {
		t.Errorf("hold %+v %q", h, h.Held())
	}
}
