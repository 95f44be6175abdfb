package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// A quorum queue outside any ladder, under delayed retry by a policy,
// whose consumer rejects: on 4.3 status shows it beside the ladders (here
// none), discover --delays --json lists it with messages_delayed and its
// settings, and doctor notes it with the release's edges (the policy keys
// honoured since 4.3.1; its delivery limit, which a consumer that nacks
// never reaches). 3.10 and 4.0 have no delayed retry: the policy is
// refused, the rejected message is ready again, and none of the three
// says a word about delayed retry.
func TestDelayedRetryAcrossTheVhost(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	_, ver := brokertest.Management(t, cfg)
	has := ver.QuorumDelayedRetry()
	hold := brokertest.DelayedRetryHold.Milliseconds()
	code := brokertest.PutPolicy(t, cfg, "retry", fmt.Sprintf(`{"pattern":"^orders$","apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":%d}}`, hold))
	if want := map[bool]int{true: http.StatusCreated, false: http.StatusBadRequest}[ver.QuorumDelayedRetryPolicy()]; code != want {
		t.Fatalf("%v: policy with delayed-retry keys answered %d, want %d", ver, code, want)
	}
	ch := brokertest.RawChannel(t, cfg)
	if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 5}); err != nil {
		t.Fatal(err)
	}
	brokertest.PublishTo(t, cfg, "orders", 1)
	brokertest.Reject(t, cfg, "orders")

	if !has {
		if s := brokertest.AwaitStats(t, cfg, "orders", func(s topology.QueueStats) bool { return s.Ready == 1 }); s.Ready != 1 || s.Delayed != 0 {
			t.Errorf("%v: orders %+v, want the rejected message ready again", ver, s)
		}
	}
	var text string
	testutil.Eventually(t, 20*time.Second, "status to show what delayed retry holds", func() error {
		text = mustRun(t, env, "status")
		if has && !strings.Contains(text, "1 held by delayed retry in 1 queue") {
			return fmt.Errorf("%v: status:\n%s", ver, text)
		}
		return nil
	})
	if has {
		for _, want := range []string{"orders", "all", "10m", "policy retry"} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: status lacks %q:\n%s", ver, want, text)
			}
		}
	} else if strings.Contains(text, "elayed retry") {
		t.Errorf("%v: status speaks of delayed retry:\n%s", ver, text)
	}

	var inv struct {
		Delays []struct {
			Retry []jsonRetryQueue `json:"delayed_retry"`
			Read  bool             `json:"delayed_retry_read"`
		} `json:"delays"`
	}
	out := mustRun(t, env, "discover", "--delays", "--json")
	if err := json.Unmarshal([]byte(out), &inv); err != nil || len(inv.Delays) != 1 {
		t.Fatalf("%v %s", err, out)
	}
	got := inv.Delays[0]
	if !has {
		if got.Read || len(got.Retry) != 0 {
			t.Errorf("%v: discover --delays --json: %+v, want nothing read", ver, got)
		}
	} else if got.Read != true || len(got.Retry) != 1 || got.Retry[0].MessagesDelayed == nil || *got.Retry[0].MessagesDelayed != 1 ||
		got.Retry[0].Source != "policy" || got.Retry[0].Policy != "retry" || got.Retry[0].Type != "all" || got.Retry[0].MinMS != hold ||
		got.Retry[0].DeliveryLimit == nil || *got.Retry[0].DeliveryLimit != 5 {
		t.Errorf("%v: discover --delays --json: %+v\n%s", ver, got, out)
	}
	if text := mustRun(t, env, "discover", "--delays"); strings.Contains(text, "1 held by delayed retry") != has {
		t.Errorf("%v: discover --delays:\n%s", ver, text)
	}

	_, out, _ = run(t, env, "doctor", "--json")
	var rep struct{ Checks []check }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := map[string]string{}
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.Area, "delayed retry") {
			found[c.Text] = c.Status
		}
	}
	if !has {
		if len(found) != 0 {
			t.Errorf("%v: doctor speaks of delayed retry: %v", ver, found)
		}
		return
	}
	want := map[string]string{
		"orders: delayed retry type all, 10m, set by policy retry; 1 held now": checkInfo,
		"orders: its delivery limit (5) never fires for a consumer that nacks": checkInfo,
		"RabbitMQ " + ver.String() + " honours delayed-retry keys in policies": checkInfo,
	}
	for prefix, status := range want {
		hit := ""
		for text, s := range found {
			if strings.HasPrefix(text, prefix) {
				hit = s
			}
		}
		if hit != status {
			t.Errorf("%v: doctor %q: %q, want %s\n%v", ver, prefix, hit, status, found)
		}
	}
}
