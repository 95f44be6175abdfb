package ops

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func TestCheckDrift(t *testing.T) {
	l, err := topology.Ladder{Name: "d", Layout: "prefix", Unit: 1e9, Levels: 3, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	down := errors.New("connection refused")
	empty := topology.Snapshot{}
	tests := []struct {
		name       string
		snap       *topology.Snapshot
		err        error
		checked    bool
		drift      bool
		errText    string
		plan, appl int
	}{
		{"unread", nil, down, false, false, "connection refused", ExitError, ExitOK},
		{"unread without a reason", nil, nil, false, false, "", ExitError, ExitOK},
		{"nothing declared", &empty, nil, true, true, "", ExitDrift, ExitDrift},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckDrift(plan, tt.snap, tt.err)
			if c.Checked != tt.checked || (len(c.Drift) > 0) != tt.drift || c.ErrText() != tt.errText {
				t.Fatalf("CheckDrift = %+v", c)
			}
			if c.PlanExit() != tt.plan || c.ApplyExit() != tt.appl {
				t.Fatalf("exits %d %d, want %d %d", c.PlanExit(), c.ApplyExit(), tt.plan, tt.appl)
			}
		})
	}
	if c := (DriftCheck{Checked: true}); c.PlanExit() != ExitOK || c.ApplyExit() != ExitOK {
		t.Fatalf("a match exits %d %d", c.PlanExit(), c.ApplyExit())
	}
}

func TestVerifyApplied(t *testing.T) {
	l, err := topology.Ladder{Name: "d", Layout: "prefix", Unit: 1e9, Levels: 3, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	if c := VerifyApplied(plan, topology.Snapshot{}, errors.New("down")); c.Checked || c.ErrText() != "down" || c.ApplyExit() != ExitOK {
		t.Fatalf("unread: %+v", c)
	}
	if c := VerifyApplied(plan, topology.Snapshot{}, nil); !c.Checked || len(c.Drift) == 0 || c.ApplyExit() != ExitDrift {
		t.Fatalf("read: %+v", c)
	}
}

func TestBenchProblems(t *testing.T) {
	tests := []struct {
		problems []string
		want     string
	}{
		{nil, ""},
		{[]string{"3 lost"}, "benchmark found 1 problem, first: 3 lost"},
		{[]string{"3 lost", "1 early"}, "benchmark found 2 problems, first: 3 lost"},
	}
	for _, tt := range tests {
		got := ""
		if err := BenchProblems(tt.problems); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("BenchProblems(%q) = %q, want %q", tt.problems, got, tt.want)
		}
	}
}

func TestBrokerLabel(t *testing.T) {
	for raw, want := range map[string]string{
		"amqp://guest:secret@rabbit:5672/prod": "guest@rabbit:5672",
		"amqps://rabbit.example:5671":          "rabbit.example:5671",
		"amqp://:pw@rabbit/":                   "rabbit",
		"":                                     "broker",
		"not a url\x7f":                        "broker",
	} {
		if got := BrokerLabel(raw); got != want {
			t.Errorf("BrokerLabel(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestConfirmation(t *testing.T) {
	if err := NeedsYes("purge q", "q"); !IsInputError(err) || err.Error() != `purge q needs --yes (or run it in a terminal to confirm by typing "q")` {
		t.Errorf("NeedsYes = %v", err)
	}
	eof := errors.New("EOF")
	tests := []struct {
		line string
		err  error
		want string
	}{
		{"jobs\n", nil, ""},
		{"  jobs  ", eof, ""},
		{"", eof, "not confirmed: EOF"},
		{"job\n", nil, `not confirmed (typed "job", expected "jobs"); nothing was changed`},
		{"\n", nil, `not confirmed (typed "", expected "jobs"); nothing was changed`},
	}
	for _, tt := range tests {
		err := Confirmation(tt.line, tt.err, "jobs")
		got := ""
		if err != nil {
			got = err.Error()
			if !IsInputError(err) {
				t.Errorf("%q: not bad input", tt.line)
			}
		}
		if got != tt.want {
			t.Errorf("Confirmation(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestLadderCompletions(t *testing.T) {
	ladder := func(name, layout string) topology.Found {
		l, err := topology.Ladder{Name: name, Layout: layout, Unit: 1e9, Levels: 3, Radix: 2}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		return topology.Found{Ladder: l}
	}
	found := []topology.Found{ladder("jobs2", "prefix"), ladder("jobs", "prefix"), ladder("jobs", "suffix"), ladder("mail", "prefix")}
	got := LadderCompletions(found, "jo")
	want := []string{"jobs\tprefix, 7s", "jobs2\tprefix, 7s"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if LadderCompletions(found, "x") != nil {
		t.Fatal("no match completes nothing")
	}
}
