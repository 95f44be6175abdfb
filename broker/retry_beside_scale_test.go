//go:build scale

package broker_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Status' read of delayed retry beside its ladders (ops.ReadRetryBeside)
// alone in its vhost and beside N other queues (RUNGS_BESIDE, 10,000 by
// default), the median of 7 runs each, with its requests: status
// --ladder's (the ladder's queues alone) and status' (with the policies
// and the queues a policy names). The ladder is the default one (direct,
// quorum, radix 16, 7 levels of 1 s: 105 rungs) with two targets under
// delayed retry, orders by a policy whose pattern names two queues and
// mail by its arguments; named, outside it, is under a policy's ^named$;
// outside has delayed retry by its arguments and is never read. Beside
// them, status' own read of the ladder (ops.ReadLadders) and the sorted
// listings status took before (RetryQueues). It asserts only what each
// read finds; the times, their ratios, the requests and the load average
// are logged for docs/delays.md.
func TestStatusRetryBesideOtherQueues(t *testing.T) {
	n := 10000
	if s := os.Getenv("RUNGS_BESIDE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	type figures struct {
		ladder, named, whole, ladderRead, wholeRead, sorted time.Duration
		ladderReq, namedReq, sortedReq                      int64
		load                                                string
	}
	ratio := func(x, y time.Duration) float64 { return x.Seconds() / y.Seconds() }
	measure := func(others int) figures {
		cfg := brokertest.NewVhost(t)
		mcfg := cfg
		mcfg.Timeout = 5 * time.Minute
		m, err := broker.NewManagement(mcfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		ver, err := m.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		version := func() (topology.Version, error) { return m.Version(ctx) }
		if others > 0 {
			brokertest.DeclareOthers(t, cfg, "other-", others)
		}
		hold := int64(600000)
		for name, pattern := range map[string]string{"retry": `^(orders|billing)$`, "named": `^named$`} {
			brokertest.PutPolicy(t, cfg, name, fmt.Sprintf(`{"pattern":%q,"apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":%d}}`, pattern, hold))
		}
		byArgs := amqp.Table{"x-queue-type": "quorum", "x-delayed-retry-type": "all", "x-delayed-retry-min": hold}
		ch := brokertest.RawChannel(t, cfg)
		for name, args := range map[string]amqp.Table{"orders": {"x-queue-type": "quorum"}, "mail": byArgs, "outside": byArgs, "named": {"x-queue-type": "quorum"}} {
			if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
				t.Fatal(err)
			}
		}
		l, err := topology.Ladder{Name: "jobs", Vhost: cfg.Vhost, Layout: "direct", Unit: time.Second, Levels: 7, Radix: 16, QueueType: topology.Quorum,
			Targets: []string{"orders", "mail"}}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		conn, err := broker.Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Apply(ctx, l.Plan()); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"orders", "mail", "outside", "named"} {
			brokertest.PublishTo(t, cfg, q, 1)
			brokertest.Reject(t, cfg, q)
		}
		named := ops.Scope{Vhost: cfg.Vhost, Ladders: []string{"jobs"}}
		whole := ops.Scope{Vhost: cfg.Vhost}
		check := func(h health.RetryHold, beside bool) error {
			want := map[string]bool{"orders": true, "mail": true, "named": beside}
			got := 0
			for _, q := range h.Queues {
				if !want[q.Name] || !q.Reported || q.Delayed != 1 {
					return fmt.Errorf("%+v, want orders, mail (and named beside) holding 1 each", h.Queues)
				}
				got++
			}
			if got != 2+map[bool]int{true: 1}[beside] {
				return fmt.Errorf("%+v, want orders, mail (and named beside)", h.Queues)
			}
			return nil
		}
		testutil.Eventually(t, time.Minute, "every held message read", func() error {
			for _, beside := range []bool{false, true} {
				sc := map[bool]ops.Scope{false: named, true: whole}[beside]
				o, err := ops.ReadLadders(ctx, m, sc)
				if err != nil {
					return err
				}
				h, err := ops.ReadRetryBeside(ctx, m, version, cfg.Vhost, o.Snapshot().Queues, beside)
				if err != nil {
					return err
				}
				if err := check(h, beside); err != nil {
					return err
				}
			}
			return nil
		})
		var f figures
		var ls, ns, ws, lrs, wrs, ss []time.Duration
		for range 7 {
			t0 := time.Now()
			o, err := ops.ReadLadders(ctx, m, named)
			lrs = append(lrs, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			r0, _ := m.Cost()
			t0 = time.Now()
			h, err := ops.ReadRetryBeside(ctx, m, version, cfg.Vhost, o.Snapshot().Queues, false)
			ls = append(ls, time.Since(t0))
			r1, _ := m.Cost()
			if err == nil {
				err = check(h, false)
			}
			if err != nil {
				t.Fatal(err)
			}
			f.ladderReq = r1 - r0

			t0 = time.Now()
			o, err = ops.ReadLadders(ctx, m, whole)
			wrs = append(wrs, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			r0, _ = m.Cost()
			t0 = time.Now()
			h, err = ops.ReadRetryBeside(ctx, m, version, cfg.Vhost, o.Snapshot().Queues, true)
			ns = append(ns, time.Since(t0))
			r1, _ = m.Cost()
			if err == nil {
				err = check(h, true)
			}
			if err != nil {
				t.Fatal(err)
			}
			f.namedReq = r1 - r0
			ws = append(ws, wrs[len(wrs)-1]+ns[len(ns)-1])

			r0, _ = m.Cost()
			t0 = time.Now()
			if _, err := m.RetryQueues(ctx, cfg.Vhost, ver); err != nil {
				t.Fatal(err)
			}
			ss = append(ss, time.Since(t0))
			r1, _ = m.Cost()
			f.sortedReq = r1 - r0
		}
		f.ladder, f.named, f.whole, f.ladderRead, f.wholeRead, f.sorted = median(ls), median(ns), median(ws), median(lrs), median(wrs), median(ss)
		f.load = loadAverage()
		t.Logf("beside %d (load %s): status --ladder's own read %s + delayed retry beside it %s (%d requests); status' own read %s + delayed retry beside it %s (%d requests); the sorted listings %s (%d requests)",
			others, f.load, f.ladderRead.Round(time.Millisecond), f.ladder.Round(100*time.Microsecond), f.ladderReq,
			f.wholeRead.Round(time.Millisecond), f.named.Round(100*time.Microsecond), f.namedReq, f.sorted.Round(time.Millisecond), f.sortedReq)
		return f
	}
	if !versionHasRetry(t) {
		return
	}
	a, b := measure(0), measure(n)
	many := topology.FormatCount(int64(n))
	t.Logf("delayed retry beside status --ladder: alone %s (%d requests), beside %s queues %s (%d requests): %.2fx; with its own read %.2fx (%s, %s)",
		a.ladder.Round(100*time.Microsecond), a.ladderReq, many, b.ladder.Round(100*time.Microsecond), b.ladderReq, ratio(b.ladder, a.ladder),
		ratio(b.ladderRead+b.ladder, a.ladderRead+a.ladder), (a.ladderRead + a.ladder).Round(time.Millisecond), (b.ladderRead + b.ladder).Round(time.Millisecond))
	t.Logf("delayed retry beside status: alone %s (%d requests), beside %s queues %s (%d requests): %.2fx; with its own read %.2fx (%s, %s)",
		a.named.Round(100*time.Microsecond), a.namedReq, many, b.named.Round(100*time.Microsecond), b.namedReq, ratio(b.named, a.named),
		ratio(b.whole, a.whole), a.whole.Round(time.Millisecond), b.whole.Round(time.Millisecond))
	t.Logf("the sorted listings it replaces: alone %s (%d requests), beside %s %s (%d requests): %.2fx",
		a.sorted.Round(time.Millisecond), a.sortedReq, many, b.sorted.Round(time.Millisecond), b.sortedReq, ratio(b.sorted, a.sorted))
}
