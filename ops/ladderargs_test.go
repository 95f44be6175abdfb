package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ladderArgs is the flags' defaults with the given ones set.
func ladderArgs(given ...string) LadderArgs {
	a := LadderArgs{Name: topology.DefaultName, Layout: topology.DefaultLayout, Unit: "1s", QueueType: string(topology.DefaultQueueType), Given: map[string]bool{}}
	for _, g := range given {
		a.Given[g] = true
	}
	return a
}

func TestLadderArgsCheck(t *testing.T) {
	cases := []struct {
		name string
		edit func(*LadderArgs)
		want string
	}{
		{"defaults", func(*LadderArgs) {}, ""},
		{"bad unit", func(a *LadderArgs) { a.Unit = "soon" }, "--unit: "},
		{"max-delay and levels", func(a *LadderArgs) { a.MaxDelay, a.Levels = "7d", 5 }, "--max-delay and --levels both set; give one"},
		{"bad max-delay", func(a *LadderArgs) { a.MaxDelay = "x" }, "--max-delay: "},
		{"bad strategy", func(a *LadderArgs) { a.Strategy, a.Given["dead-letter-strategy"] = "maybe", true }, "--dead-letter-strategy "},
		{"below not positive", func(a *LadderArgs) { a.Below, a.Given["at-most-once-below"] = "0s", true }, `--at-most-once-below "0s": want a duration above 0, such as 1m`},
		{"unknown layout", func(a *LadderArgs) { a.Layout = "spiral" }, "spiral"},
		{"wildcard in the name", func(a *LadderArgs) { a.Name = "jobs.*" }, "--ladder: "},
	}
	for _, tc := range cases {
		a := ladderArgs()
		tc.edit(&a)
		err := a.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !IsInputError(err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestLadderArgsShapeGiven(t *testing.T) {
	cases := []struct {
		layout string
		given  []string
		want   bool
	}{
		{"direct", nil, false},
		{"direct", []string{"layout", "unit", "levels"}, false},
		{"direct", []string{"layout", "unit", "levels", "radix"}, true},
		{"prefix", []string{"layout", "unit", "max-delay", "radix"}, true},
		{"suffix", []string{"layout", "unit", "levels"}, true},
		{"suffix", []string{"layout", "unit"}, false},
		{"celery", []string{"layout"}, true},
		{"celery", nil, false},
	}
	for _, tc := range cases {
		a := ladderArgs(tc.given...)
		a.Layout = tc.layout
		if got := a.ShapeGiven(); got != tc.want {
			t.Errorf("%s %v: %v, want %v", tc.layout, tc.given, got, tc.want)
		}
	}
}

func TestLadderArgsNaming(t *testing.T) {
	celery := ladderArgs("layout")
	celery.Layout = "celery"
	celeryL, err := celery.Ladder("/", nil)
	if err != nil {
		t.Fatal(err)
	}
	named := ladderArgs("ladder")
	named.Name = "jobs"
	cases := []struct {
		name     string
		a        LadderArgs
		query    LadderQuery
		named    string
		explicit bool
		names    []string
	}{
		{"defaults", ladderArgs(), LadderQuery{Name: topology.DefaultName}, "", false, []string{topology.DefaultName}},
		{"--ladder", named, LadderQuery{Name: "jobs"}, "jobs", true, []string{"jobs"}},
		{"--layout celery", celery, LadderQuery{Name: celeryL.Name, Layout: "celery"}, celeryL.Name, celeryL.Name != topology.DefaultName, []string{celeryL.Name, topology.DefaultName}},
	}
	for _, tc := range cases {
		if q := tc.a.Query(); q != tc.query {
			t.Errorf("%s: query %+v, want %+v", tc.name, q, tc.query)
		}
		if n := tc.a.Named(); n != tc.named {
			t.Errorf("%s: named %q, want %q", tc.name, n, tc.named)
		}
		if x := tc.a.NamedExplicitly(); x != tc.explicit {
			t.Errorf("%s: explicit %v", tc.name, x)
		}
		if n := tc.a.Names("/"); fmt.Sprint(n) != fmt.Sprint(tc.names) {
			t.Errorf("%s: names %v, want %v", tc.name, n, tc.names)
		}
	}
	l := topology.Ladder{Name: "jobs", Vhost: "v", Layout: "suffix"}
	if got := named.NotFound(l); got != `no ladder "jobs" in vhost v` {
		t.Errorf("not found: %s", got)
	}
	if got := ladderArgs("layout").NotFound(l); got != `no suffix ladder "jobs" in vhost v` {
		t.Errorf("not found with --layout: %s", got)
	}
}

func TestUnreadShapeError(t *testing.T) {
	down := UnreadShapeError("publish", "jobs", errors.New("dial tcp: refused"))
	refused := UnreadShapeError("publish", "jobs", fmt.Errorf("GET: %w", broker.ErrUnauthorized))
	if !strings.Contains(down.Error(), "did not answer") || !strings.Contains(down.Error(), "try again") {
		t.Errorf("down: %v", down)
	}
	if !strings.Contains(refused.Error(), "refused the user") || !strings.Contains(refused.Error(), "management (or monitoring) tag") {
		t.Errorf("refused: %v", refused)
	}
}

// TestFoundLadder: only a ladder found on the broker is apply's Existing.
func TestFoundLadder(t *testing.T) {
	l := topology.Ladder{Name: "jobs"}
	for _, tc := range []struct {
		r    ResolvedLadder
		want *topology.Ladder
	}{
		{ResolvedLadder{Ladder: l}, nil},
		{ResolvedLadder{Ladder: l, Found: true, Existing: l}, &l},
	} {
		got := tc.r.FoundLadder()
		if (got == nil) != (tc.want == nil) || got != nil && got.Name != tc.want.Name {
			t.Errorf("FoundLadder of %+v = %v, want %v", tc.r, got, tc.want)
		}
	}
}
