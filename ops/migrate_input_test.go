package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// A migration's flags are refused, one line naming the flag and as bad
// input, before any broker is asked; good ones become the request.
func TestMigrateInputRequest(t *testing.T) {
	ok := MigrateInput{From: "a", To: "b", Margin: "1s", Window: 8}
	for _, tc := range []struct {
		name string
		edit func(*MigrateInput)
		want string
	}{
		{"no source", func(in *MigrateInput) { in.From = "" }, "--from (a ladder) or --from-delays (a delay group) is required"},
		{"delays and from", func(in *MigrateInput) { in.FromDelays = "app/x" }, "--from-delays takes the place of --from and --from-layout"},
		{"delays and from-layout", func(in *MigrateInput) { in.From, in.FromLayout, in.FromDelays = "", "suffix", "app/x" }, "takes the place of"},
		{"delays without to", func(in *MigrateInput) { in.From, in.To, in.FromDelays = "", "", "app/x" }, "--to is required: the ladder to move the delays into"},
		{"delays and dest", func(in *MigrateInput) { in.From, in.Dest, in.FromDelays = "", "q", "app/x" }, "--dest does not go with --from-delays"},
		{"negative limit", func(in *MigrateInput) { in.Limit = -1 }, "--limit cannot be negative"},
		{"no window", func(in *MigrateInput) { in.Window = 0 }, "--window must be at least 1"},
		{"force without dry run", func(in *MigrateInput) { in.Force = true }, "--force goes with --dry-run"},
		{"unknown layout", func(in *MigrateInput) { in.ToLayout = "spiral" }, "spiral"},
		{"bad rate", func(in *MigrateInput) { in.Rate = "fast" }, "--rate: "},
		{"bad margin", func(in *MigrateInput) { in.Margin = "5" }, "--margin: "},
	} {
		in := ok
		tc.edit(&in)
		_, err := in.Request()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !IsInputError(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (input %v), want %q", tc.name, err, IsInputError(err), tc.want)
		}
	}
	in := ok
	in.Rate, in.FromLayout, in.DryRun, in.Force = "6000/m", "suffix", true, true
	req, err := in.Request()
	if err != nil {
		t.Fatal(err)
	}
	if req.Rate != 100 || req.Margin != time.Second || req.Window != 8 || req.From != "a" || req.FromLayout != "suffix" {
		t.Errorf("%+v", req)
	}
	if _, err := (MigrateInput{FromDelays: "app/x", To: "b", Margin: "1s", Window: 1}).Request(); err != nil {
		t.Errorf("delays: %v", err)
	}
}

func TestMigrateInputPreviewCount(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{
		{0, DefaultMigratePreview}, {5, 5}, {broker.MaxPeek + 1, broker.MaxPeek},
	} {
		if got := (MigrateInput{Limit: tc.limit}).PreviewCount(); got != tc.want {
			t.Errorf("limit %d: %d, want %d", tc.limit, got, tc.want)
		}
	}
}

func TestMigrateNeedsManagement(t *testing.T) {
	down := errors.New("down")
	if err := (MigrateRequest{From: "a"}).NeedsManagement(down); err.Error() != "migrate needs the management API to discover both ladders: down" || !errors.Is(err, down) {
		t.Error(err)
	}
	if err := (MigrateRequest{FromDelays: "app/x"}).NeedsManagement(down); err.Error() != "migrate needs the management API to find the delays and the ladder: down" {
		t.Error(err)
	}
}

// A run's outcome: interrupted, failed, or what it left behind, each
// named; a ladder's migration and a migration of delays word it for what
// they drain.
func TestMigrateOutcome(t *testing.T) {
	ladder, err := PlanMigrate(migrateVhost(t), MigrateRequest{From: "a", To: "b"})
	if err != nil {
		t.Fatal(err)
	}
	delays := ladder
	delays.Group = &topology.DelayGroup{App: "app", Name: "x"}
	boom := errors.New("boom")
	held := []RungResult{{Queue: "q", OthersHolding: 1}}
	empty, stopped := broker.StopEmpty, "the connection closed"
	for _, tc := range []struct {
		name        string
		mp          MigratePlan
		res         MigrateResult
		err         error
		interrupted bool
		want        string // "" no error
		wantStop    bool   // an InterruptedError
	}{
		{"ladder done", ladder, MigrateResult{Moved: 3, Stopped: empty}, nil, false, "", false},
		{"ladder interrupted", ladder, MigrateResult{Moved: 2, Parked: 1}, boom, true, "migrate interrupted after 3 message(s); the rest stay in a", true},
		{"ladder failed", ladder, MigrateResult{}, boom, false, "boom", false},
		{"ladder stayed", ladder, MigrateResult{Stayed: 2}, nil, false, "2 message(s) stayed in the rungs of a (reasons above)", false},
		{"ladder held", ladder, MigrateResult{Rungs: held}, nil, false, "other consumers held messages of a that", false},
		{"delays done", delays, MigrateResult{Stopped: broker.StopLimit}, nil, false, "", false},
		{"delays failed", delays, MigrateResult{Stopped: stopped}, boom, true, "boom", false},
		{"delays interrupted", delays, MigrateResult{Moved: 1, Stopped: stopped}, nil, true, "migrate interrupted after 1 message(s); the rest stay in their delay queues", true},
		{"delays stopped early", delays, MigrateResult{Stayed: 1, Stopped: stopped}, nil, false, "", false},
		{"delays stayed", delays, MigrateResult{Stayed: 1, Stopped: empty}, nil, false, "1 message(s) stayed in the delay queues of app/x", false},
		{"delays held", delays, MigrateResult{Rungs: held, Stopped: empty}, nil, false, "other consumers held messages of app/x", false},
	} {
		err := tc.mp.Outcome(tc.res, tc.err, tc.interrupted)
		var ie *InterruptedError
		switch {
		case tc.want == "" && err != nil, tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case errors.As(err, &ie) != tc.wantStop:
			t.Errorf("%s: interrupted %v", tc.name, !tc.wantStop)
		}
	}
}

// A dry run connects only when a rung is to be peeked at: a plan whose
// rungs are all skipped (missing here) says so without a connection.
func TestMigratePreviewConnectsOnlyToPeek(t *testing.T) {
	mp, err := PlanMigrate(migrateVhost(t), MigrateRequest{From: "a", To: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range mp.Rungs {
		mp.Rungs[i].Missing = true
	}
	out, err := mp.Preview(context.Background(), MigratePreviewRequest{Vhost: "/", Count: 5,
		Open: func(context.Context) (MovePreviewer, error) { return nil, errors.New("connected") }})
	if err != nil || len(out) != 3 {
		t.Fatalf("%v %+v", err, out)
	}
	for _, rp := range out {
		if rp.Skipped != "the queue does not exist" || rp.Messages == nil {
			t.Errorf("%+v", rp)
		}
	}
}
