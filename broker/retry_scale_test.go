//go:build scale

package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The read of the queues under delayed retry alone in its vhost and
// beside N other queues (RUNGS_BESIDE, 10,000 by default), the median of
// 7 runs each, in its two ways, each beside the listing its command holds:
//
//   - status (and the exporter) hold a listing of what a ladder may be
//     named (ops.ReadLadders of the whole vhost), not of every queue, and
//     add the sorted listings (RetryQueues: the policies, two listings
//     without statistics, each candidate's own page);
//   - discover --delays and doctor hold the listing of every queue
//     (DelaySnapshot) and add only the policies and the pages of the
//     candidates whose listing lacked messages_delayed
//     (ops.ReadRetryListed), none on 4.3.6.
//
// Against them, one listing with statistics in the columns that carry
// messages_delayed (Stats) and one unpaged listing of the sorted
// listings' columns. Before 4.3 there is nothing to measure: it checks
// that RetryQueues asks nothing. It asserts only that every read finds
// the same queues; the times, their ratios and the load average are
// logged for docs/delays.md.
func TestRetryQueuesBesideOtherQueues(t *testing.T) {
	n := 10000
	if s := os.Getenv("RUNGS_BESIDE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	type figures struct {
		retry, list, unpaged, status, delays, listed time.Duration
		requests, listedRequests                     int64
		found                                        int
		bytes                                        int
		load                                         string
		columns                                      [2]time.Duration
		pageBytes                                    [2]int
	}
	ratio := func(x, y time.Duration) float64 { return x.Seconds() / y.Seconds() }
	measure := func(others int) figures {
		cfg := brokertest.NewVhost(t)
		// Beside 10,000 queues on a loaded machine a listing can take
		// longer than the default timeout: the measurement wants its time.
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
		// A new quorum queue's figures wait for the broker's next
		// statistics emission: until then the listing lacks them and the
		// read takes the queue's own page, which is not what is measured.
		testutil.Eventually(t, time.Minute, "messages_delayed listed", func() error {
			_, snap, err := ops.Delays(ctx, m, cfg.Vhost, nil)
			if err != nil {
				return err
			}
			for _, q := range snap.Queues {
				if q.QueueType() == topology.Quorum && !q.Stats.DelayedReported {
					return fmt.Errorf("%s: no messages_delayed", q.Name)
				}
			}
			return nil
		})
		var f figures
		var rs, ls, us, ss, ds, lds []time.Duration
		var cs [2][]time.Duration
		for range 7 {
			r0, _ := m.Cost()
			t0 := time.Now()
			qs, err := m.RetryQueues(ctx, cfg.Vhost, ver)
			rs = append(rs, time.Since(t0))
			r1, _ := m.Cost()
			if err != nil {
				t.Fatal(err)
			}
			f.requests, f.found = r1-r0, len(qs)
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
			f.bytes = len(body)
			t0 = time.Now()
			if _, err := ops.ReadLadders(ctx, m, ops.Scope{Vhost: cfg.Vhost}); err != nil {
				t.Fatal(err)
			}
			ss = append(ss, time.Since(t0))
			t0 = time.Now()
			_, snap, err := ops.Delays(ctx, m, cfg.Vhost, nil)
			ds = append(ds, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			// What the policy columns add to that listing: its pages in
			// the columns it had before them, then in today's.
			for i, cols := range []string{oldDelayColumns, oldDelayColumns + ",policy,operator_policy,effective_policy_definition,delivery_limit"} {
				t0 = time.Now()
				f.pageBytes[i] = 0
				for page := 1; ; page++ {
					code, body := brokertest.MgmtRequest(t, cfg, "GET", "/api/queues/"+url.PathEscape(cfg.Vhost)+"?page_size=500&sort=name&page="+strconv.Itoa(page)+"&columns="+cols, "")
					if code != 200 {
						t.Fatal(code)
					}
					f.pageBytes[i] += len(body)
					var p struct {
						PageCount int `json:"page_count"`
					}
					if err := json.Unmarshal(body, &p); err != nil {
						t.Fatal(err)
					}
					if page >= p.PageCount {
						break
					}
				}
				cs[i] = append(cs[i], time.Since(t0))
			}
			r0, _ = m.Cost()
			t0 = time.Now()
			h, err := ops.ReadRetryListed(ctx, m, cfg.Vhost, ver, snap.Queues)
			lds = append(lds, time.Since(t0))
			r1, _ = m.Cost()
			if err != nil {
				t.Fatal(err)
			}
			f.listedRequests = r1 - r0
			if len(h.Queues) != f.found {
				t.Fatalf("the listing found %d queues under delayed retry, the sorted listings %d", len(h.Queues), f.found)
			}
			for _, q := range h.Queues {
				if !q.Reported {
					t.Errorf("%s: the listing gave no messages_delayed", q.Name)
				}
			}
		}
		f.retry, f.list, f.unpaged, f.status, f.delays, f.listed = median(rs), median(ls), median(us), median(ss), median(ds), median(lds)
		f.columns = [2]time.Duration{median(cs[0]), median(cs[1])}
		f.load = loadAverage()
		t.Logf("beside %d (load %s): discover's listing in its former columns %s (%d bytes), with the policy columns %s (%d bytes): %.2fx",
			others, f.load, f.columns[0].Round(time.Millisecond), f.pageBytes[0], f.columns[1].Round(time.Millisecond), f.pageBytes[1], ratio(f.columns[1], f.columns[0]))
		t.Logf("beside %d (load %s): one unpaged listing without statistics: %s, %d bytes", others, f.load, f.unpaged.Round(time.Millisecond), f.bytes)
		t.Logf("beside %d (load %s): status' own read %s + sorted listings %s (%d requests); discover's listing %s + from it %s (%d requests)",
			others, f.load, f.status.Round(time.Millisecond), f.retry.Round(time.Millisecond), f.requests,
			f.delays.Round(time.Millisecond), f.listed.Round(100*time.Microsecond), f.listedRequests)
		return f
	}
	if !versionHasRetry(t) {
		return
	}
	a, b := measure(0), measure(n)
	if a.found != 2 || b.found != 2 {
		t.Fatalf("found %d and %d queues under delayed retry, want 2", a.found, b.found)
	}
	many := topology.FormatCount(int64(n))
	t.Logf("RetryQueues (sorted listings) alone %s (%d requests), beside %s queues %s (%d requests): %.2fx; %.2fx of status' own read beside them (%s)",
		a.retry.Round(time.Millisecond), a.requests, many, b.retry.Round(time.Millisecond), b.requests, ratio(b.retry, a.retry),
		ratio(b.retry, b.status), b.status.Round(time.Millisecond))
	t.Logf("ReadRetryListed (from the listing held) alone %s (%d requests), beside %s queues %s (%d requests): %.2fx; %.4fx of the listing it reuses beside them (%s)",
		a.listed.Round(100*time.Microsecond), a.listedRequests, many, b.listed.Round(100*time.Microsecond), b.listedRequests, ratio(b.listed, a.listed),
		ratio(b.listed, b.delays), b.delays.Round(time.Millisecond))
	t.Logf("the list with statistics (Stats): alone %s, beside %s %s: %.2fx (RetryQueues beside them: %.2fx of it)",
		a.list.Round(time.Millisecond), many, b.list.Round(time.Millisecond), ratio(b.list, a.list), ratio(b.retry, b.list))
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes,
// where it can be read: the machine is shared, and a time means little
// without it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fs := strings.Fields(string(b))
	if len(fs) < 3 {
		return "unknown"
	}
	return strings.Join(fs[:3], " ")
}

// oldDelayColumns are the columns of discover's listing before it carried
// the policies.
const oldDelayColumns = "name,durable,auto_delete,arguments,type,consumers,messages_ready,messages_unacknowledged,messages_dlx,messages_delayed,head_message_timestamp"

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
