package ops

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func TestMigrateInputRefuseReadOnly(t *testing.T) {
	ro, rw := broker.Config{ReadOnly: true}, broker.Config{}
	for _, tc := range []struct {
		name    string
		in      MigrateInput
		cfg     broker.Config
		refused bool
	}{
		{"a dry run under read-only moves nothing", MigrateInput{DryRun: true}, ro, false},
		{"a run under read-only is refused", MigrateInput{}, ro, true},
		{"a run without read-only goes", MigrateInput{}, rw, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.RefuseReadOnly(tc.cfg)
			if (err != nil) != tc.refused {
				t.Fatalf("err %v, refused %v", err, tc.refused)
			}
			if err != nil && (!errors.Is(err, broker.ErrReadOnly) || !strings.HasPrefix(err.Error(), "migrate: ")) {
				t.Errorf("err %v", err)
			}
		})
	}
}

func TestMigratePlanQuestion(t *testing.T) {
	from, _ := topology.Ladder{Name: "jobs", Vhost: "v", Layout: "suffix", Levels: 2, Radix: 2}.Normalize()
	to, _ := topology.Ladder{Name: "jobs2", Vhost: "v", Layout: "prefix", Levels: 2, Radix: 2}.Normalize()
	ladder := MigratePlan{Migration: topology.Migration{From: from, To: to}, Park: "jobs.migrate.parked", Ready: 7}
	group := ladder
	group.Group, group.Rungs = &topology.DelayGroup{App: "celery", Name: "retries"}, make([]MigrateRung, 2)
	for _, tc := range []struct {
		name       string
		mp         MigratePlan
		limit      int
		want, word string
	}{
		{"a ladder's migration", ladder, 0,
			"migrate about 7 message(s) in flight from " + from.Describe() + "\n  into " + to.Describe() + ";\n  messages it cannot take go to jobs.migrate.parked", "jobs"},
		{"with --limit", ladder, 3,
			"migrate about 7 message(s) in flight from " + from.Describe() + "\n  into " + to.Describe() + ";\n  messages it cannot take go to jobs.migrate.parked (at most 3 messages)", "jobs"},
		{"a delay group's, where --limit is not named", group, 3,
			"migrate about 7 message(s) from the 2 delay queue(s) of celery/retries\n  into " + to.Describe() + ";\n  messages it cannot take go to jobs.migrate.parked", "retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.mp.Question(tc.limit); got != tc.want {
				t.Errorf("question\n%q\nwant\n%q", got, tc.want)
			}
			if got := tc.mp.Word(); got != tc.word {
				t.Errorf("word %q, want %q", got, tc.word)
			}
		})
	}
}

func TestPurgeAskWithArgsAndFailure(t *testing.T) {
	if got := (PurgeAsk{Vhost: "v"}).WithArgs(nil); got.Queue != "" {
		t.Errorf("no argument: queue %q", got.Queue)
	}
	if got := (PurgeAsk{Vhost: "v"}).WithArgs([]string{"q"}); got.Queue != "q" || got.Vhost != "v" {
		t.Errorf("an argument: %+v", got)
	}
	r := PurgeResult{Failed: "jobs.r2", Purged: 4}
	if r.Failure(nil) != nil {
		t.Error("no error is a failure")
	}
	cause := errors.New("boom")
	if err := r.Failure(cause); !errors.Is(err, cause) || err.Error() != "purge jobs.r2 (after 4 messages from earlier queues): boom" {
		t.Errorf("failure %v", err)
	}
}

func TestPlanTeardown(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Vhost: "v", Layout: "prefix", Levels: 2, Radix: 2}.Normalize()
	busy := l.Plan().Snapshot()
	for i, q := range busy.Queues {
		if q.Name == l.Rungs()[0].Queue {
			busy.Queues[i].Stats.Ready = 5
		}
	}
	for _, tc := range []struct {
		name     string
		ask      TeardownAsk
		err      string
		inFlight int64
	}{
		{"a ladder the snapshot did not find is refused", TeardownAsk{Ladder: l, Snap: &topology.Snapshot{}, NotFound: `no ladder "jobs" in vhost v`}, `no ladder "jobs" in vhost v; nothing was deleted`, 0},
		{"without a snapshot the ladder is taken as named, nothing counted", TeardownAsk{Ladder: l}, "", 0},
		{"a found ladder counts what it holds", TeardownAsk{Ladder: l, Snap: &busy, Found: true}, "", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanTeardown(tc.ask)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.InFlight != tc.inFlight || len(p.Plan.Queues) != len(l.Plan().Queues) {
				t.Errorf("in flight %d, want %d; %d queues", p.InFlight, tc.inFlight, len(p.Plan.Queues))
			}
			want := "teardown " + l.Describe() + ": delete " + strconv.Itoa(len(p.Plan.Queues)) + " queues and " + strconv.Itoa(len(p.Plan.Exchanges)) + " exchanges; " + strconv.Itoa(int(tc.inFlight)) + " message(s) in flight will be lost"
			if p.Question() != want {
				t.Errorf("question %q\nwant %q", p.Question(), want)
			}
			if p.Failure(nil) != nil || p.Failure(errors.New("x")).Error() != "teardown jobs: x" {
				t.Errorf("failure wording")
			}
		})
	}
}

func TestContextSourceAndReadOnly(t *testing.T) {
	env := map[string]string{"RUNGS_URL": "u", "RUNGS_MGMT_URL": "m", "RUNGS_VHOST": "v", "RUNGS_CONTEXT": "c", "RUNGS_CONFIG": "/f", "HOME": "/h"}
	c := ContextSource(func(k string) string { return env[k] }, "/p", "prod")
	for k, want := range map[string]string{"RUNGS_URL": "", "RUNGS_MGMT_URL": "", "RUNGS_VHOST": "", "RUNGS_CONTEXT": "", "RUNGS_CONFIG": "/f", "HOME": "/h"} {
		if got := c.Getenv(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if c.PathFlag != "/p" || c.ContextFlag != "prod" {
		t.Errorf("flags %q %q", c.PathFlag, c.ContextFlag)
	}
	for _, tc := range []struct {
		name                   string
		ctx, first, asked, out bool
	}{
		{"--read-only on a read-only first broker carries over", false, true, true, true},
		{"a first broker read-only by its context does not", false, true, false, false},
		{"--read-only the first broker's context overrode does not", false, false, true, false},
		{"the context's own read-only stays", true, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CarryReadOnly(broker.Config{ReadOnly: tc.ctx}, broker.Config{ReadOnly: tc.first}, tc.asked)
			if got.ReadOnly != tc.out {
				t.Errorf("read-only %v, want %v", got.ReadOnly, tc.out)
			}
		})
	}
}
