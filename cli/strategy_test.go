package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A ladder applied at most once: declared so on every rung, its messages
// delivered (none lost on a healthy broker), kept as it is by discover,
// plan and a re-apply without the flag, refused a change of strategy in
// place, and named by doctor with what it risks.
func TestApplyAtMostOnce(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	shape := []string{"--ladder", "amo", "--unit", "100ms", "--levels", "4", "--radix", "4"}
	code, out, errs := run(t, env, append([]string{"apply", "--dead-letter-strategy", "at-most-once"}, shape...)...)
	if code != ExitOK || !strings.Contains(out, "dead-lettering at-most-once") || !strings.Contains(out, "drift: none") ||
		!strings.Contains(errs, "dead-letters at most once") || !strings.Contains(errs, "a node stopping") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	rungs := 0
	for _, q := range vhostSnapshot(t, cfg).Queues {
		if _, dlx := q.Args["x-dead-letter-exchange"]; !dlx {
			continue
		}
		rungs++
		if q.Args["x-dead-letter-strategy"] != topology.AtMostOnce || q.Args["x-queue-type"] != "quorum" {
			t.Errorf("%s declared with %v", q.Name, q.Args)
		}
	}
	if rungs != 12 {
		t.Errorf("%d rungs dead-letter, want 12", rungs)
	}

	// 2.7s is 27 units, digits 1, 2, 3: three hops at most once each.
	mustRun(t, env, "publish", "--ladder", "amo", "--delay", "2.7s", "--count", "300", "--id-prefix", "m")
	c := dial(t, cfg)
	got := drain(t, c, "amo.done", 300, time.Minute)
	if len(got) != 300 {
		t.Fatalf("%d of 300 messages reached amo.done", len(got))
	}
	ids := map[string]bool{}
	for _, d := range got {
		ids[d.MessageID] = true
	}
	if len(ids) != 300 {
		t.Errorf("%d distinct message ids among 300 arrivals", len(ids))
	}
	for _, q := range []string{"amo.done", "amo.unroutable"} {
		if _, ok, err := c.Get(context.Background(), q, true); ok || err != nil {
			t.Errorf("%s holds more than was published (%v)", q, err)
		}
	}

	var disc struct {
		Ladders []struct {
			Ladder struct {
				Name     string `json:"name"`
				Strategy string `json:"dead_letter_strategy"`
			} `json:"ladder"`
			Drift []any `json:"drift"`
		} `json:"ladders"`
	}
	before := mustRun(t, env, "discover", "--json")
	// What the broker holds, without the message counts that discover
	// reads from statistics a few seconds old.
	defs := mustRun(t, env, "export", "--ladder", "amo")
	err := json.Unmarshal([]byte(before), &disc)
	if found := disc.Ladders; err != nil || len(found) != 1 || found[0].Ladder.Strategy != topology.AtMostOnce || len(found[0].Drift) != 0 {
		t.Fatalf("discover: %+v %v\n%s", found, err, before)
	}
	if out := mustRun(t, env, "discover"); !strings.Contains(out, "quorum at-most-once") {
		t.Errorf("discover does not show the strategy:\n%s", out)
	}
	if _, st, _ := run(t, env, "status", "--ladder", "amo"); !strings.Contains(st, "quorum at-most-once") {
		t.Errorf("status does not show the strategy:\n%s", st)
	}
	if code, out, errs := run(t, env, "plan", "--ladder", "amo"); code != ExitOK || !strings.Contains(out, "at-most-once") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	// Without the flag, the ladder keeps its strategy and apply says so.
	code, out, errs = run(t, env, "apply", "--ladder", "amo")
	if code != ExitOK || !strings.Contains(out, "drift: none") || !strings.Contains(errs, "dead-letters at most once") {
		t.Errorf("re-apply: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = run(t, env, "apply", "--ladder", "amo", "--dead-letter-strategy", "at-least-once")
	if code != ExitError || !strings.Contains(errs, "dead-letter at-most-once and the flags ask at-least-once") ||
		!strings.Contains(errs, "nothing was declared") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("apply at least once over it: exit %d: %s", code, errs)
	}
	if after := mustRun(t, env, "export", "--ladder", "amo"); after != defs {
		t.Errorf("a refused apply changed the broker:\nbefore %s\nafter %s", defs, after)
	}
	_, out, _ = run(t, env, "doctor", "--ladder", "amo")
	if !strings.Contains(out, "dead-letters at most once between its rungs") || !strings.Contains(out, "lost if that rung cannot take it") {
		t.Errorf("doctor does not name the trade:\n%s", out)
	}
}

// A bad strategy, or one with classic rungs: one line, nothing declared.
func TestApplyDeadLetterStrategyRefused(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	for _, args := range [][]string{
		{"--ladder", "bad", "--dead-letter-strategy", "at-most-twice"},
		{"--ladder", "bad", "--dead-letter-strategy", "at-most-once", "--queue-type", "classic"},
		{"--ladder", "bad", "--dead-letter-strategy", "at-least-once", "--queue-type", "classic"},
		{"--layout", "nsb", "--dead-letter-strategy", "at-most-once"},
	} {
		code, _, errs := run(t, env, append([]string{"apply"}, args...)...)
		if code != ExitUsage || !strings.Contains(errs, "dead-letter") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("apply %v: exit %d: %s", args, code, errs)
		}
	}
	if out := mustRun(t, env, "discover"); !strings.Contains(out, "no ladders") {
		t.Fatalf("a refused apply declared something:\n%s", out)
	}
}

// At most once on the short rungs only: the rungs below the limit get
// at-most-once, the others keep at-least-once; messages crossing both
// arrive; the ladder is discovered, planned and re-applied as it is, a
// change to the whole ladder is refused, and doctor names which rungs.
func TestApplyAtMostOnceBelow(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	// Rungs of 100ms to 19.2s; below 1s are 100, 200, 300, 400 and 800ms,
	// and the limit is spelled as the shortest rung it leaves: 1.2s.
	shape := []string{"--ladder", "part", "--unit", "100ms", "--levels", "4", "--radix", "4"}
	code, out, errs := run(t, env, append([]string{"apply", "--at-most-once-below", "1s"}, shape...)...)
	if code != ExitOK || !strings.Contains(out, "dead-lettering at-most-once below 1.2s") || !strings.Contains(out, "drift: none") ||
		!strings.Contains(errs, "from its rungs shorter than 1.2s") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	amo := 0
	for _, q := range vhostSnapshot(t, cfg).Queues {
		ttl, ok := q.TTL()
		if _, dlx := q.Args["x-dead-letter-exchange"]; !dlx || !ok {
			continue
		}
		want := topology.AtLeastOnce
		if ttl < 1200*time.Millisecond {
			want, amo = topology.AtMostOnce, amo+1
		}
		if q.Args["x-dead-letter-strategy"] != want {
			t.Errorf("%s (%s) declared with %v", q.Name, ttl, q.Args["x-dead-letter-strategy"])
		}
	}
	if amo != 5 {
		t.Errorf("%d rungs at most once, want 5", amo)
	}
	// 2.7s: 1.6s at least once, then 800ms and 300ms at most once.
	mustRun(t, env, "publish", "--ladder", "part", "--delay", "2.7s", "--count", "200", "--id-prefix", "p")
	if got := drain(t, dial(t, cfg), "part.done", 200, time.Minute); len(got) != 200 {
		t.Fatalf("%d of 200 messages reached part.done", len(got))
	}
	before := mustRun(t, env, "discover", "--json")
	defs := mustRun(t, env, "export", "--ladder", "part")
	if !strings.Contains(before, `"at_most_once_below_ms": 1200`) || !strings.Contains(before, `"dead_letter_strategy": "at-most-once"`) {
		t.Fatalf("discover --json:\n%s", before)
	}
	if out := mustRun(t, env, "discover"); !strings.Contains(out, "quorum at-most-once below 1.2s") {
		t.Errorf("discover:\n%s", out)
	}
	if code, out, errs := run(t, env, "plan", "--ladder", "part"); code != ExitOK || !strings.Contains(out, "below 1.2s") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run(t, env, "apply", "--ladder", "part"); code != ExitOK || !strings.Contains(out, "drift: none") || !strings.Contains(errs, "shorter than 1.2s") {
		t.Errorf("re-apply: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = run(t, env, "apply", "--ladder", "part", "--dead-letter-strategy", "at-most-once")
	if code != ExitError || !strings.Contains(errs, "dead-letter at-most-once below 1.2s and the flags ask at-most-once;") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("apply to the whole ladder: exit %d: %s", code, errs)
	}
	if after := mustRun(t, env, "export", "--ladder", "part"); after != defs {
		t.Errorf("a refused apply changed the broker:\nbefore %s\nafter %s", defs, after)
	}
	if _, out, _ := run(t, env, "doctor", "--ladder", "part"); !strings.Contains(out, "dead-letters at most once from its rungs shorter than 1.2s") {
		t.Errorf("doctor:\n%s", out)
	}
	for _, args := range [][]string{
		{"apply", "--ladder", "bad", "--at-most-once-below", "soon"},
		{"apply", "--ladder", "bad", "--at-most-once-below", "1ms"},
		{"apply", "--ladder", "bad", "--at-most-once-below", "1m", "--dead-letter-strategy", "at-least-once"},
		{"apply", "--ladder", "bad", "--at-most-once-below", "1m", "--queue-type", "classic"},
	} {
		if code, _, errs := run(t, env, args...); code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
	if after := mustRun(t, env, "discover", "--json"); strings.Contains(after, `"name": "bad"`) {
		t.Errorf("a refused apply declared ladder bad:\n%s", after)
	}
}
