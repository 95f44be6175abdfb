package ops

import (
	"errors"
	"fmt"
	"testing"
)

func TestHintedStall(t *testing.T) {
	hinted := &StillStalledError{Hint: []string{"rabbitmqctl eval 'x'"}}
	tests := []struct {
		name string
		err  error
		want *StillStalledError
	}{
		{"nil", nil, nil},
		{"other", errors.New("x"), nil},
		{"no hint", &StillStalledError{}, nil},
		{"hint", hinted, hinted},
		{"wrapped hint", fmt.Errorf("unstall: %w", hinted), hinted},
	}
	for _, tt := range tests {
		if got := HintedStall(tt.err); got != tt.want {
			t.Errorf("%s: HintedStall = %v", tt.name, got)
		}
	}
}

func TestRabbitmqctl(t *testing.T) {
	if got, want := RabbitmqctlEval("kubectl exec r -- rabbitmqctl", `io:format("it's").`), `kubectl exec r -- rabbitmqctl eval 'io:format("it'\''s").'`; got != want {
		t.Errorf("RabbitmqctlEval = %s, want %s", got, want)
	}
	failed := errors.New("exit status 69")
	unreachable := []struct {
		name, out string
		err       error
		want      string
	}{
		{"answers", "ok\n", nil, ""},
		{"no output", "", failed, `--rabbitmqctl "ctl" cannot reach the node (exit status 69); nothing was changed`},
		{"first line", "\nError: unable to perform an operation\nmore\n", failed, `--rabbitmqctl "ctl" cannot reach the node (exit status 69: Error: unable to perform an operation); nothing was changed`},
	}
	for _, tt := range unreachable {
		err := CtlUnreachable("ctl", tt.out, tt.err)
		if got := fmt.Sprint(err); (err == nil) != (tt.want == "") || (err != nil && got != tt.want) {
			t.Errorf("%s: CtlUnreachable = %v, want %q", tt.name, err, tt.want)
		}
	}
	if m, err := CtlRestarted("q", "Restarting\n{ra, q}\n", nil); err != nil || m != "{ra, q}" {
		t.Errorf("CtlRestarted = %q %v", m, err)
	}
	if m, err := CtlRestarted("q", "boom\nmore", failed); m != "" || fmt.Sprint(err) != "q: rabbitmqctl eval failed (exit status 69): boom" {
		t.Errorf("CtlRestarted failed = %q %v", m, err)
	}
}
