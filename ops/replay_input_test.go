package ops

import (
	"errors"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// TestReplayInputRequest: each combination of flags a replay refuses, in
// the words the CLI prints, and the request the good ones make.
func TestReplayInputRequest(t *testing.T) {
	errInto := errors.New("bad ladder flags")
	into := func(string) (*ReplayInto, error) { return &ReplayInto{Query: LadderQuery{Name: "jobs"}}, nil }
	base := ReplayInput{From: "dlq", Window: 1, Vhost: "v", Into: into}
	with := func(f func(*ReplayInput)) ReplayInput { in := base; f(&in); return in }
	for _, tc := range []struct {
		name  string
		in    ReplayInput
		want  string // the refusal; "" for none
		input bool   // the refusal is bad input
		check func(*testing.T, ReplayRequest)
	}{
		{"no target", base, "replay needs exactly one of --to-origin, --to-ladder NAME or --to-queue QUEUE", true, nil},
		{"two targets", with(func(in *ReplayInput) { in.ToOrigin, in.ToQueue = true, "q" }), "replay needs exactly one of --to-origin, --to-ladder NAME or --to-queue QUEUE", true, nil},
		{"delay without ladder", with(func(in *ReplayInput) { in.ToQueue, in.Delay = "q", "5m" }), "--delay and --to go with --to-ladder", true, nil},
		{"to without ladder", with(func(in *ReplayInput) { in.ToOrigin, in.To = true, "w" }), "--delay and --to go with --to-ladder", true, nil},
		{"window", with(func(in *ReplayInput) { in.ToOrigin, in.Window = true, 0 }), "--window must be at least 1", true, nil},
		{"max held", with(func(in *ReplayInput) { in.ToOrigin, in.MaxHeld = true, -1 }), "--max-held cannot be negative", true, nil},
		{"ladder without delay", with(func(in *ReplayInput) { in.ToLadder = "jobs" }), "--delay: a replay into a ladder needs one, e.g. 5m", true, nil},
		{"ladder flags refused", with(func(in *ReplayInput) {
			in.ToLadder, in.Delay = "jobs", "5m"
			in.Into = func(string) (*ReplayInto, error) { return nil, errInto }
		}), errInto.Error(), false, nil},
		{"bad rate", with(func(in *ReplayInput) { in.ToOrigin, in.Rate = true, "fast" }), "--rate: ", true, nil},
		{"into a ladder", with(func(in *ReplayInput) { in.ToLadder, in.Delay, in.To, in.Rate = "jobs", "5m", "work", "200/s" }), "", false, func(t *testing.T, r ReplayRequest) {
			if r.To.Delay != 5*time.Minute || r.To.Dest != "work" || r.To.Into == nil || r.To.Into.Query.Name != "jobs" || r.Rate != 200 {
				t.Errorf("request %+v", r)
			}
		}},
		{"to a queue", with(func(in *ReplayInput) { in.ToQueue, in.Park, in.Limit, in.ReadOnly, in.DryRun = "q", "p", 3, true, true }), "", false, func(t *testing.T, r ReplayRequest) {
			if r.To.Queue != "q" || r.To.Into != nil || r.Source != "dlq" || r.Vhost != "v" || r.Park != "p" || r.Limit != 3 || !r.ReadOnly || !r.DryRun {
				t.Errorf("request %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := tc.in.Request()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				tc.check(t, req)
			case err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want:
				t.Fatalf("error %v, want %q", err, tc.want)
			case IsInputError(err) != tc.input:
				t.Errorf("input error %v, want %v", IsInputError(err), tc.input)
			}
		})
	}
}

// TestReplayInputRefused: what Replay refuses, worded for the flags.
func TestReplayInputRefused(t *testing.T) {
	other := errors.New("connection refused")
	shape := &ShapeUnknownError{Err: other}
	tr := topology.Trace{Delay: 90 * time.Second, Target: "work"}
	for _, tc := range []struct {
		name  string
		err   error
		want  string
		input bool
	}{
		{"none", nil, "", false},
		{"other", other, "connection refused", false},
		{"route", &RouteError{Trace: tr, Err: errors.New("no binding")}, "nothing replayed: a message for 1m30s would not reach work: no binding", false},
		{"no queue", &NoQueueError{"dlq", "v"}, (&NoQueueError{"dlq", "v"}).Error() + "; nothing was replayed", false},
		{"field with a flag", fieldErr("park", "p is the source queue"), "--park: p is the source queue", true},
		{"field without a flag", fieldErr("colour", "blue"), "colour: blue", true},
		// A queue not there is said as such, whichever field named it.
		{"target queue not there", &FieldError{Field: "queue", Err: &NoQueueError{"q", "v"}}, (&NoQueueError{"q", "v"}).Error() + "; nothing was replayed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReplayInput{}.Refused(tc.err)
			if tc.want == "" {
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
				return
			}
			if got == nil || got.Error() != tc.want || IsInputError(got) != tc.input {
				t.Errorf("got %v (input %v), want %q (input %v)", got, IsInputError(got), tc.want, tc.input)
			}
		})
	}
	if got := (ReplayInput{}).Refused(shape); got != shape {
		t.Errorf("shape unknown: got %v, want it as it is", got)
	}
}

func TestReplayUncheckedWarnings(t *testing.T) {
	if w := (ReplayPlan{}).UncheckedWarnings(); w != nil {
		t.Errorf("checked plan warns %q", w)
	}
	w := ReplayPlan{Unchecked: errors.New("401")}.UncheckedWarnings()
	if len(w) != 1 || w[0] != "routes not checked (management API: 401); relying on mandatory returns" {
		t.Errorf("warnings %q", w)
	}
}
