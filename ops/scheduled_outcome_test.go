package ops

import (
	"context"
	"errors"
	"testing"
)

func TestScheduledOutcome(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	failed := errors.New("connection lost")
	p := ActionPlan{ActionRequest: ActionRequest{Action: ActCancel}}
	for _, c := range []struct {
		name        string
		ctx         context.Context
		res         ActionResult
		err         error
		want        string
		interrupted bool
	}{
		{"all acted on", live, ActionResult{Acted: 3}, nil, "", false},
		{"some stayed", live, ActionResult{Acted: 3, Kept: 2}, nil, "2 selected message(s) stayed in their rungs (reasons above)", false},
		{"failed", live, ActionResult{Acted: 1}, failed, "connection lost", false},
		{"interrupted", done, ActionResult{Acted: 4}, failed, "cancel interrupted after 4 message(s); the rest keep their due times", true},
	} {
		err := p.Outcome(c.ctx, c.res, c.err)
		var ie *InterruptedError
		if got := errText(err); got != c.want || errors.As(err, &ie) != c.interrupted {
			t.Errorf("%s: %q (interrupted %v)", c.name, got, errors.As(err, &ie))
		}
	}
	var ie *InterruptedError
	if err := (ScanPlan{}).Outcome(done, ScanResult{Seen: 7}, nil); !errors.As(err, &ie) || err.Error() != "scan interrupted after 7 message(s); nothing was changed" {
		t.Errorf("scan interrupted: %v", err)
	}
	if err := (ScanPlan{}).Outcome(live, ScanResult{}, failed); err != failed {
		t.Errorf("scan failed: %v", err)
	}
	if (ActionPlan{ActionRequest: ActionRequest{Action: ActDiscard}}).YesConfirms() || !p.YesConfirms() {
		t.Error("--yes stands for typing except for a discard")
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
