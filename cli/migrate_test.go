package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// arrivals consumes queues from now on and records when each message came.
type arrivals struct {
	mu  sync.Mutex
	got map[string][]broker.Delivery // by queue
}

func watch(t *testing.T, c *broker.Conn, queues ...string) *arrivals {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := &arrivals{got: map[string][]broker.Delivery{}}
	for _, q := range queues {
		in, err := c.Consume(ctx, q, 100)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for d := range in {
				_ = d.Ack()
				a.mu.Lock()
				a.got[q] = append(a.got[q], d)
				a.mu.Unlock()
			}
		}()
	}
	return a
}

// wait returns what reached queue once n messages have, or fails.
func (a *arrivals) wait(t *testing.T, queue string, n int, within time.Duration) []broker.Delivery {
	t.Helper()
	var got []broker.Delivery
	testutil.Eventually(t, within, fmt.Sprintf("%d messages in %s", n, queue), func() error {
		a.mu.Lock()
		got = append([]broker.Delivery(nil), a.got[queue]...)
		a.mu.Unlock()
		if len(got) < n {
			return fmt.Errorf("%d of %d messages reached %s", len(got), n, queue)
		}
		return nil
	})
	if len(got) != n {
		t.Fatalf("%d of %d messages reached %s", len(got), n, queue)
	}
	return got
}

// published is a batch of messages published into a ladder with one delay.
type published struct {
	prefix string
	delay  time.Duration
	at     time.Time // just before the publish: no message is due earlier
}

func publishDelayed(t *testing.T, env map[string]string, ladder, prefix string, delay time.Duration, n int, to string) published {
	t.Helper()
	p := published{prefix: prefix, delay: delay, at: time.Now()}
	args := []string{"publish", "--ladder", ladder, "--delay", topology.FormatDelay(delay), "--count", fmt.Sprint(n), "--id-prefix", prefix}
	if to != "" {
		args = append(args, "--to", to)
	}
	mustRun(t, env, args...)
	return p
}

// checkOnTime checks that every message of the batches arrived, none before
// it was due and none much later.
func checkOnTime(t *testing.T, got []broker.Delivery, late time.Duration, batches ...published) {
	t.Helper()
	lo, hi := time.Duration(1<<62), -time.Duration(1<<62)
	defer func() { t.Logf("%d message(s) arrived %s to %s after they were due", len(got), lo, hi) }()
	for _, d := range got {
		var b *published
		for i := range batches {
			if strings.HasPrefix(d.MessageID, batches[i].prefix) {
				b = &batches[i]
			}
		}
		if b == nil {
			t.Errorf("unexpected message %q", d.MessageID)
			continue
		}
		due := b.at.Add(b.delay)
		lo, hi = min(lo, d.Received.Sub(due)), max(hi, d.Received.Sub(due))
		switch {
		case d.Received.Before(due):
			t.Errorf("%s arrived %s early (delay %s)", d.MessageID, due.Sub(d.Received), b.delay)
		case d.Received.Sub(due) > late:
			t.Errorf("%s arrived %s late (delay %s)", d.MessageID, d.Received.Sub(due), b.delay)
		}
	}
}

type migrateJSON struct {
	Moved, Parked, Stayed, Unknown int
	Stopped                        string
	Reasons                        map[string]int
	Rungs                          []struct {
		Queue                 string
		Moved, Parked, Stayed int
		Left                  int
	}
}

func runMigrateJSON(t *testing.T, env map[string]string, args ...string) migrateJSON {
	t.Helper()
	var res migrateJSON
	out := mustRun(t, env, append([]string{"migrate", "--yes", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return res
}

// rungsEmpty checks that no rung of the ladder holds a message.
func rungsEmpty(t *testing.T, c *broker.Conn, l topology.Ladder) {
	t.Helper()
	for _, r := range l.Rungs() {
		if n := queueDepth(t, c, r.Queue); n != 0 {
			t.Errorf("%s still holds %d message(s)", r.Queue, n)
		}
	}
}

func TestMigrateSuffixToPrefix(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	// The source: 7 binary levels of 1s (up to 2m7s), no destinations.
	// The batch the migration must find in a lower rung stays in one from
	// 32s to 56s after it was published, so that the dry run and the
	// migration may start anywhere in 23s: with 200ms units it had 5.7s,
	// then 8.9s, and CI runs under load began the migration after both.
	mustRun(t, env, "apply", "--ladder", "s", "--layout", "suffix", "--unit", "1s", "--levels", "7", "--queue-type", "classic")
	// The target: up to 63.5s in steps of 500ms, delivering to s.work.
	mustRun(t, env, "apply", "--ladder", "p", "--unit", "500ms", "--levels", "7", "--radix", "2", "--target", "s.work", "--queue-type", "classic")
	a := watch(t, c, "s.work", "p.done")

	// Published in this order, so that a dry run's first 10 of the 64s
	// rung show a parked batch too.
	batches := []published{
		publishDelayed(t, env, "s", "two-", 2*time.Second, 5, ""),         // done before the migration
		publishDelayed(t, env, "s", "hops3-", 56*time.Second, 5, ""),      // 32s, then the 16s and 8s rungs
		publishDelayed(t, env, "s", "seventy-", 70*time.Second, 5, ""),    // still in its first rung (64s)
		publishDelayed(t, env, "s", "hundred20-", 120*time.Second, 5, ""), // likewise, and over p's maximum until 56.5s: parked
		publishDelayed(t, env, "s", "ninety4-", 94*time.Second, 5, ""),    // in its first rung too; within p's 63.5s from 31.5s on (timestamps are whole seconds)
	}
	lastPublished := time.Now()
	// Refusals first, while the batches still sit in their first rungs,
	// so that the dry run and the migration meet them where they expect.
	if code, _, errs := run(t, env, "migrate", "--from", "s", "--to", "p"); code != ExitUsage || !strings.Contains(errs, "--yes") {
		t.Errorf("migrate without --yes: exit %d %s", code, errs)
	}
	if code, _, errs := run(t, env, "migrate", "--from", "s", "--to", "p", "--yes", "--read-only"); code == ExitOK || !strings.Contains(errs, "read-only") {
		t.Errorf("migrate --read-only: exit %d %s", code, errs)
	}
	// Timed from when the last batch was published: it must have waited
	// 31.5s to be within p's maximum, and a loaded CI machine took seconds
	// to publish the batches before it, which once left it parked when the
	// wait was timed from the first. The first batches have waited longer,
	// never past 56s unless publishing and the dry run took 22s.
	time.Sleep(33*time.Second - time.Since(lastPublished))

	src := topology.Ladder{Name: "s", Layout: "suffix", Unit: time.Second, Levels: 7}
	src, _ = src.Normalize()
	// A dry run says where each would go and moves nothing.
	out := mustRun(t, env, "migrate", "--from", "s", "--to", "p", "--dest", "s.work", "--dry-run")
	if !strings.Contains(out, "s.delay.16 (16s): 5 ready") && !strings.Contains(out, "s.delay.8 (8s): 5 ready") {
		t.Errorf("dry run lacks the batch in a lower rung:\n%s", out)
	}
	for _, want := range []string{"dry run: nothing was moved", "s.delay.64 (1m4s): 15 ready", "(x-death)", "(timestamp)", "via p.ingest key ", "→ s.work",
		"→ park: its remaining delay exceeds the maximum of ladder p ("} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}

	start := time.Now()
	res := runMigrateJSON(t, env, "--from", "s", "--to", "p", "--dest", "s.work")
	t.Logf("migrated %s after the first publish, in %s: %+v", start.Sub(batches[0].at).Round(time.Millisecond), time.Since(start), res)
	if res.Moved != 15 || res.Parked != 5 || res.Stayed != 0 || res.Unknown != 0 || res.Stopped != broker.StopEmpty {
		t.Errorf("migrate: %+v", res)
	}
	if len(res.Rungs) != 7 || res.Rungs[0].Queue != "s.delay.64" || res.Rungs[6].Queue != "s.delay.1" {
		t.Errorf("rungs not drained from the longest down: %+v", res.Rungs)
	}
	rungsEmpty(t, c, src)

	// Late by up to 1s for whole-second timestamps, plus the 1s --margin,
	// plus up to the 500ms unit of p, plus the broker's own lag (2.5s left for a loaded machine).
	got := a.wait(t, "s.work", 15, 2*time.Minute)
	checkOnTime(t, got, 5*time.Second, batches[1], batches[2], batches[4])
	for _, d := range got {
		m, _ := d.Headers[topology.HeaderMigrated].(map[string]any)
		if m["from"] != "s" || m["to"] != "p" || m["from-layout"] != "suffix" {
			t.Errorf("%s: x-rungs-migrated %v", d.MessageID, d.Headers[topology.HeaderMigrated])
		}
		_, saved := d.Headers[topology.HeaderSavedDeath]
		if strings.HasPrefix(d.MessageID, "hops3-") && (m["basis"] != string(topology.BasisDeath) || !saved) {
			t.Errorf("%s: basis %v, x-rungs-x-death %v", d.MessageID, m["basis"], saved)
		}
		if (strings.HasPrefix(d.MessageID, "seventy-") || strings.HasPrefix(d.MessageID, "ninety4-")) && m["basis"] != string(topology.BasisPublish) {
			t.Errorf("%s: basis %v", d.MessageID, m["basis"])
		}
	}
	if n := queueDepth(t, c, "s.done"); n != 5 {
		t.Errorf("s.done holds %d, want the 5 due before the migration", n)
	}
	parked := drain(t, c, "s.migrate.parked", 5, 5*time.Second)
	if len(parked) != 5 {
		t.Fatalf("%d of 5 parked", len(parked))
	}
	for _, d := range parked {
		reason, _ := d.Headers[topology.HeaderReason].(string)
		ms, _ := topology.HeaderInt(d.Headers[topology.HeaderRemainingMS])
		if !strings.HasPrefix(d.MessageID, "hundred20-") || !strings.Contains(reason, "exceeds the maximum of ladder p") || ms <= 63500 || ms > 120000 {
			t.Errorf("parked %s: %q, %dms left", d.MessageID, reason, ms)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.got["p.done"]); n != 0 {
		t.Errorf("%d message(s) went to p.done instead of --dest", n)
	}
}

func TestMigrateBetweenQueueTypes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ from, to topology.QueueType }{{topology.Classic, topology.Quorum}, {topology.Quorum, topology.Classic}} {
		t.Run(fmt.Sprintf("%s to %s", tc.from, tc.to), func(t *testing.T) {
			t.Parallel()
			migrateQueueTypes(t, tc.from, tc.to)
		})
	}
}

// migrateQueueTypes moves messages to two destinations and the done queue
// from a prefix ladder of one queue type into one of another; those for a
// destination the target does not bind are parked.
func migrateQueueTypes(t *testing.T, from, to topology.QueueType) {
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	// A 200ms unit: rung 04 holds 3.2s, 05 6.4s, 06 12.8s. Every batch sits
	// in a rung the migration reaches with at least 3s to spare, so it
	// moves all of them however slowly a loaded machine starts it (a 100ms
	// unit left 0.6s, and a CI run's migration took 2s).
	mustRun(t, env, "apply", "--ladder", "c", "--unit", "200ms", "--levels", "8", "--radix", "2", "--queue-type", string(from), "--target", "work", "--target", "other")
	mustRun(t, env, "apply", "--ladder", "q", "--unit", "200ms", "--levels", "8", "--radix", "2", "--queue-type", string(to), "--target", "work")
	a := watch(t, c, "work", "q.done")
	toWork := []published{
		publishDelayed(t, env, "c", "w9-", 9600*time.Millisecond, 10, "work"), // 6.4s, then waits in the 3.2s rung
		publishDelayed(t, env, "c", "w12-", 12*time.Second, 10, "work"),       // the same two rungs, then 1.6s and 0.8s
	}
	toDone := publishDelayed(t, env, "c", "d14-", 14*time.Second, 10, "") // in its first rung (12.8s)
	publishDelayed(t, env, "c", "o16-", 16*time.Second, 10, "other")      // likewise
	time.Sleep(6600*time.Millisecond - time.Since(toWork[0].at))

	start := time.Now()
	res := runMigrateJSON(t, env, "--from", "c", "--to", "q", "--park", "c.unplaced", "--rate", "1000/s")
	t.Logf("migrated in %s: %+v", time.Since(start), res)
	if res.Moved != 30 || res.Parked != 10 || res.Stayed != 0 || res.Reasons["destination other is not bound to ladder q"] != 10 {
		t.Errorf("migrate: %+v", res)
	}
	src, _ := topology.Ladder{Name: "c", Unit: 200 * time.Millisecond, Levels: 8, Radix: 2}.Normalize()
	rungsEmpty(t, c, src)

	// Late by up to 1s for whole-second timestamps, plus the 1s --margin,
	// plus the 200ms unit, plus the broker's own lag: up to 2.8s of it, as
	// in the suffix test (a CI run's 4.3.6 pass, its quorum hops slowed by
	// the load, delivered d14- 2.82s late). A message given its whole
	// delay again would come at least 6.6s late.
	late := 5 * time.Second
	checkOnTime(t, a.wait(t, "work", 20, 15*time.Second), late, toWork...)
	checkOnTime(t, a.wait(t, "q.done", 10, 15*time.Second), late, toDone)
	parked := drain(t, c, "c.unplaced", 10, 5*time.Second)
	for _, d := range parked {
		if r, _ := d.Headers[topology.HeaderReason].(string); !strings.HasPrefix(d.MessageID, "o16-") || r != "destination other is not bound to ladder q" {
			t.Errorf("parked %s: %q", d.MessageID, r)
		}
	}
	if len(parked) != 10 {
		t.Errorf("%d of 10 parked", len(parked))
	}
}

func TestMigrateRefusesBadInput(t *testing.T) {
	cases := map[string][]string{
		"no --to":           {"migrate", "--from", "a"},
		"negative limit":    {"migrate", "--from", "a", "--to", "b", "--limit", "-1"},
		"bad rate":          {"migrate", "--from", "a", "--to", "b", "--rate", "fast"},
		"bad margin":        {"migrate", "--from", "a", "--to", "b", "--margin", "5"},
		"unknown layout":    {"migrate", "--from", "a", "--from-layout", "spiral", "--to", "b"},
		"force without dry": {"migrate", "--from", "a", "--to", "b", "--force"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, args...)
			if code != ExitUsage || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
	code, _, errs := run(t, offline, "migrate", "--from", "a", "--to", "b", "--yes", "--read-only")
	if code == ExitOK || !strings.Contains(errs, "read-only") || strings.Contains(errs, "connection refused") {
		t.Errorf("--read-only: exit %d, %q", code, errs)
	}
}

func TestMigrateRefusesUnknownAndSameLadders(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "a", "--layout", "prefix", "--unit", "100ms", "--levels", "4", "--radix", "2")
	// A suffix ladder of the same name: its rungs, without the ingest
	// exchange and done queue that the prefix ladder's names take.
	suffix, _ := topology.Ladder{Name: "a", Layout: "suffix", Unit: 100 * time.Millisecond, Levels: 4}.Normalize()
	var p topology.Plan
	for _, x := range suffix.Plan().Exchanges {
		if x.Name != "a.ingest" {
			p.Exchanges = append(p.Exchanges, x)
		}
	}
	for _, q := range suffix.Plan().Queues {
		if q.Name != "a.done" {
			p.Queues = append(p.Queues, q)
		}
	}
	if _, err := c.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		"--from a --to b":                                                        `2 ladders are named "a" (prefix, suffix): add --from-layout`,
		"--from a --from-layout prefix --to b":                                   `no ladder "b" in vhost`,
		"--from a --from-layout prefix --to a --to-layout prefix":                "the same ladder",
		"--from a --from-layout suffix --to a --to-layout prefix --dest nowhere": `--dest: destination is not bound to the ladder: "nowhere" is not bound to a`,
	} {
		code, _, errs := run(t, env, append([]string{"migrate", "--yes"}, strings.Fields(args)...)...)
		if code == ExitOK || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, %q, want %q", args, code, errs, want)
		}
	}
	// Two ladders of one name, told apart by layout, and nothing to move.
	res := runMigrateJSON(t, env, "--from", "a", "--from-layout", "suffix", "--to", "a", "--to-layout", "prefix")
	if res.Moved != 0 || res.Stopped != broker.StopEmpty || len(res.Rungs) != 4 {
		t.Errorf("empty migration: %+v", res)
	}
	out := mustRun(t, env, "migrate", "--yes", "--from", "a", "--from-layout", "suffix", "--to", "a", "--to-layout", "prefix")
	for _, want := range []string{`migrated 0 message(s) from suffix "a" into prefix "a"`, "stopped: the source is empty", "a.delay.8", "total"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestTextBar(t *testing.T) {
	for _, tc := range []struct {
		n, total int
		want     string
	}{{0, 10, "[----]"}, {5, 10, "[##--]"}, {10, 10, "[####]"}, {12, 10, "[####]"}, {3, 0, "[####]"}} {
		if got := textBar(tc.n, tc.total, 4); got != tc.want {
			t.Errorf("textBar(%d, %d) = %s, want %s", tc.n, tc.total, got, tc.want)
		}
	}
}
