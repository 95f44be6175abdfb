package ops

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rungs-dev/rungs/broker"
)

type coded struct{ code int }

func (c coded) Error() string { return "coded" }
func (c coded) ExitCode() int { return c.code }

// TestExitCode: the one mapping of how a command ended to its exit code.
func TestExitCode(t *testing.T) {
	interrupted := &InterruptedError{errors.New("replay interrupted after 3 message(s)")}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, ExitOK},
		{"failure", errors.New("connection refused"), ExitError},
		{"read-only", fmt.Errorf("purge: %w", broker.ErrReadOnly), ExitError},
		{"its own code", coded{ExitDrift}, ExitDrift},
		{"its own code wrapped", fmt.Errorf("plan: %w", coded{ExitUsage}), ExitUsage},
		{"a code over an interruption", coded{ExitError}, ExitError},
		{"interrupted", interrupted, ExitInterrupted},
		{"interrupted wrapped", fmt.Errorf("scan: %w", interrupted), ExitInterrupted},
		{"bad input", badInput("--limit: cannot be negative"), ExitUsage},
		{"unknown flag", errors.New("unknown flag: --frm"), ExitUsage},
		{"missing flag", errors.New(`required flag(s) "from" not set`), ExitUsage},
		{"argument count", errors.New("accepts 1 arg(s), received 2"), ExitUsage},
		{"unknown command", errors.New(`unknown command "stats" for "rungs"`), ExitUsage},
		{"flag group", errors.New("if any flags in the group [a b] are set none of the others can be"), ExitUsage},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestRefuseReadOnly(t *testing.T) {
	if err := RefuseReadOnly(broker.Config{}, "purge"); err != nil {
		t.Errorf("writable: %v", err)
	}
	err := RefuseReadOnly(broker.Config{ReadOnly: true}, "purge")
	if !errors.Is(err, broker.ErrReadOnly) || err.Error() != "purge: "+broker.ErrReadOnly.Error() {
		t.Errorf("read-only: %v", err)
	}
}
