package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
)

// TestConsoleScheduled drives the scheduled view (issue 24) in a real
// terminal against the real broker, as an operator answers "is order 8812's
// timeout still scheduled, and when?", then cancels one message and
// reschedules another, and checks on the broker that exactly those moved:
// the cancelled one sits in the parking queue, the rescheduled one arrives
// at its new time, and every other keeps its place.
func TestConsoleScheduled(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	ladder := []string{"--ladder", "sched", "--unit", "1s", "--levels", "12", "--radix", "2", "--queue-type", "classic"}
	mustRungs(t, env, append([]string{"apply", "--target", "sched.work"}, ladder...)...)
	publish := func(delay, prefix string, n int) {
		mustRungs(t, env, append([]string{"publish", "--delay", delay, "--to", "sched.work", "--count", strconv.Itoa(n), "--id-prefix", prefix, "--body", `{"order":8812}`}, ladder...)...)
	}
	publish("10m", "a-", 100)
	publish("30m", "b-", 100)
	publish("20m", "order-8812-", 1)

	m := newTerm(t, 100, 30, env, rungsBinary(t)+" --ladder sched --refresh 1s; echo rungs-exit=$?; sleep 60")
	m.waitFor("the ladder view", text("ladders › sched"), 20*time.Second)

	// Find: every message, then the one by its id, due in about 20 minutes
	// by rungs' own headers.
	t.Run("find", func(t *testing.T) {
		m := &term{t, m.name} // fails this subtest, not its parent
		m.keys("s")
		m.waitFor("the scan of 201", scanDone("201 scheduled"), 30*time.Second)
		m.keys("/")
		m.typeText("order-8812-1")
		m.keys("Enter")
		s := m.waitFor("the one message", scanDone("1 match"), 30*time.Second)
		if !regexp.MustCompile(`order-8812-1.*\b(19m\d*s?|20m)\b`).MatchString(s) && !regexp.MustCompile(`\b(19m\d*s|20m)\b.*order-8812-1`).MatchString(s) {
			t.Errorf("order-8812-1 is not listed as due in about 20m:\n%s", s)
		}
		if !strings.Contains(s, "exact, from rungs") || !strings.Contains(s, "sched.work") {
			t.Errorf("the detail does not say the due time is exact from rungs' headers, or the destination:\n%s", s)
		}

	})

	// Cancel it: confirmed, parked, and the scan after finds it no more.
	t.Run("cancel", func(t *testing.T) {
		m := &term{t, m.name} // fails this subtest, not its parent
		m.keys("x")
		m.waitFor("the cancel confirmation", text("Cancel scheduled messages?"), 15*time.Second)
		m.keys("y")
		m.waitFor("the cancel result", text("1 message cancelled (parked in sched.scheduled.cancelled)"), 30*time.Second)
		m.waitFor("the scan after the cancel", scanDone("0 match"), 30*time.Second)
		if out := mustRungs(t, env, "peek", "sched.scheduled.cancelled"); !strings.Contains(out, "order-8812-1") {
			t.Errorf("the parking queue does not hold order-8812-1:\n%s", out)
		}

	})

	// Reschedule b-7 from 30 minutes to 20 seconds.
	t.Run("reschedule", func(t *testing.T) {
		m := &term{t, m.name} // fails this subtest, not its parent
		m.keys("/")
		m.keys("C-u")
		m.typeText("b-7")
		m.keys("Enter")
		m.waitFor("b-7 found", scanDone("1 match"), 30*time.Second)
		m.keys("m")
		m.waitFor("the new time asked for", text("reschedule to›"), 5*time.Second)
		m.typeText("20s")
		m.keys("Enter")
		m.waitFor("the reschedule confirmation", text("Reschedule scheduled messages?"), 15*time.Second)
		m.keys("y")
		acted := time.Now()
		m.waitFor("the reschedule result", text("1 message rescheduled"), 30*time.Second)

		// The rest of b- keep their place: still 100 of them in the ladder, b-7
		// now among the earliest due.
		m.keys("/")
		m.keys("C-u")
		m.typeText("b-*")
		m.keys("Enter")
		s := m.waitFor("b- listed again", scanDone("100 match"), 30*time.Second)
		if !regexp.MustCompile(`▸.*b-7\b`).MatchString(s) {
			t.Errorf("b-7 is not first due among the b- messages:\n%s", s)
		}
		m.keys("q")
		m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)

		// b-7 arrives at sched.work about 20s after the reschedule, once, and
		// nothing else does.
		var got []broker.Delivery
		var at time.Time
		consumeUntil(t, cfg, "sched.work", 90*time.Second, 90*time.Second, func(d broker.Delivery) {
			got = append(got, d)
			at = time.Now()
		}, func() bool { return len(got) > 0 && time.Since(at) > 3*time.Second })
		if len(got) != 1 || got[0].MessageID != "b-7" {
			ids := []string{}
			for _, d := range got {
				ids = append(ids, d.MessageID)
			}
			t.Fatalf("sched.work received %v, want b-7 alone", ids)
		}
		if took := at.Sub(acted); took < 15*time.Second {
			t.Errorf("b-7 arrived %s after the reschedule to 20s: early", took)
		}
		if h := got[0].Headers["x-rungs-rescheduled-from"]; h == nil {
			t.Errorf("b-7 does not record where it was rescheduled from: headers %v", got[0].Headers)
		}
	})
}

// scanDone matches the summary of a scan that ended with what, e.g. "1
// match": the line of a scan still running says "so far" and "scanning".
func scanDone(what string) *regexp.Regexp {
	return regexp.MustCompile(`scanned \d+ messages? · ` + regexp.QuoteMeta(what) + `\b`)
}
