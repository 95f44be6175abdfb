//go:build scale

package broker_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// The read of the queues under delayed retry (RetryQueues: the policies, a
// listing without statistics, each candidate's own page) alone in its
// vhost and beside N other queues (RUNGS_BESIDE, 10,000 by default), the
// median of 7 runs each, against one listing with statistics in the
// columns that carry messages_delayed: the observer's statistics request
// (Stats), what reading the list alone would cost. Before 4.3 there is
// nothing to measure: it checks that RetryQueues asks nothing. It asserts only that both reads find the same queues; the times
// and their ratio are logged for docs/delays.md.
func TestRetryQueuesBesideOtherQueues(t *testing.T) {
	n := 10000
	if s := os.Getenv("RUNGS_BESIDE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	measure := func(others int) (retry, list time.Duration, requests int64, found int) {
		cfg := brokertest.NewVhost(t)
		// Beside 10,000 queues on a loaded machine a listing can take
		// longer than the default timeout: the measurement wants its time.
		mcfg := cfg
		mcfg.Timeout = 5 * time.Minute
		m, err := broker.NewManagement(mcfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ver, err := m.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if others > 0 {
			brokertest.DeclareOthers(t, cfg, "other-", others)
		}
		brokertest.PutPolicy(t, cfg, "retry", `{"pattern":"^by-policy$","apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":600000}}`)
		ch := brokertest.RawChannel(t, cfg)
		for name, args := range map[string]amqp.Table{
			"by-policy": {"x-queue-type": "quorum"},
			"by-arg":    {"x-queue-type": "quorum", "x-delayed-retry-type": "all", "x-delayed-retry-min": 600000},
		} {
			if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
				t.Fatal(err)
			}
		}
		testutil.Eventually(t, time.Minute, "every queue listed", func() error {
			qs, err := m.RetryQueues(ctx, cfg.Vhost, ver)
			if err != nil || len(qs) != 2 {
				return fmt.Errorf("%d queues under delayed retry, %v", len(qs), err)
			}
			return nil
		})
		var rs, ls, us []time.Duration
		var ub int
		defer func() {
			t.Logf("beside %d: one unpaged listing without statistics: %s, %d bytes", others, median(us).Round(time.Millisecond), ub)
		}()
		for range 7 {
			r0, _ := m.Cost()
			t0 := time.Now()
			qs, err := m.RetryQueues(ctx, cfg.Vhost, ver)
			rs = append(rs, time.Since(t0))
			r1, _ := m.Cost()
			if err != nil {
				t.Fatal(err)
			}
			requests, found = r1-r0, len(qs)
			t0 = time.Now()
			if _, err := m.Stats(ctx, cfg.Vhost); err != nil {
				t.Fatal(err)
			}
			ls = append(ls, time.Since(t0))
			t0 = time.Now()
			code, body := brokertest.MgmtRequest(t, cfg, "GET", "/api/queues/"+url.PathEscape(cfg.Vhost)+"?disable_stats=true&columns=name,type,arguments,policy,operator_policy,effective_policy_definition", "")
			us = append(us, time.Since(t0))
			if code != 200 {
				t.Fatal(code)
			}
			ub = len(body)
		}
		return median(rs), median(ls), requests, found
	}
	if !versionHasRetry(t) {
		return
	}
	r0, l0, q0, f0 := measure(0)
	r1, l1, q1, f1 := measure(n)
	if f0 != 2 || f1 != 2 {
		t.Fatalf("found %d and %d queues under delayed retry, want 2", f0, f1)
	}
	t.Logf("RetryQueues alone %s (%d requests), beside %s queues %s (%d requests): %.2fx",
		r0.Round(time.Millisecond), q0, topology.FormatCount(int64(n)), r1.Round(time.Millisecond), q1, r1.Seconds()/r0.Seconds())
	t.Logf("the list with statistics (Stats): alone %s, beside %s %s: %.2fx (RetryQueues beside them: %.2fx of it)",
		l0.Round(time.Millisecond), topology.FormatCount(int64(n)), l1.Round(time.Millisecond), l1.Seconds()/l0.Seconds(), r1.Seconds()/l1.Seconds())
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// versionHasRetry reports whether the test broker has delayed retry, and
// before 4.3 checks that RetryQueues reads nothing there.
func versionHasRetry(t *testing.T) bool {
	cfg := brokertest.NewVhost(t)
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := m.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ver.QuorumDelayedRetry() {
		return true
	}
	r0, _ := m.Cost()
	if qs, err := m.RetryQueues(context.Background(), cfg.Vhost, ver); qs != nil || err != nil {
		t.Fatalf("%v: %+v %v", ver, qs, err)
	}
	if r1, _ := m.Cost(); r1 != r0 {
		t.Fatalf("%v: %d requests", ver, r1-r0)
	}
	t.Logf("%v has no delayed retry: RetryQueues asks nothing", ver)
	return false
}
