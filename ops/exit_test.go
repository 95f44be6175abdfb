package ops

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
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

// bridgeFake lists a vhost's queues as a snapshot, and as the bridge
// listing when it has one.
type bridgeFake struct{ qs []topology.Queue }

func (f bridgeFake) Snapshot(context.Context, string) (topology.Snapshot, error) {
	return topology.Snapshot{Vhost: "v", Queues: f.qs}, nil
}

func (f bridgeFake) Stats(context.Context, string) ([]topology.Queue, error) { return f.qs, nil }

type bridgeLister struct{ bridgeFake }

func (f bridgeLister) BridgeStats(context.Context, string) ([]topology.Queue, error) {
	return f.qs, nil
}

// TestReadBridgesReach: the read says how far it goes; a scoped read of an
// inspector without the bridge listing fails rather than read the vhost.
func TestReadBridgesReach(t *testing.T) {
	for _, tc := range []struct {
		name  string
		insp  Inspector
		reach Reach
		fails bool
	}{
		{"vhost", bridgeFake{}, ReachVhost, false},
		{"scoped", bridgeLister{}, ReachScoped, false},
		{"scoped, no listing", bridgeFake{}, ReachScoped, true},
	} {
		_, err := ReadBridges(context.Background(), tc.insp, "v", tc.reach)
		if (err != nil) != tc.fails {
			t.Errorf("%s: error %v, want failure %v", tc.name, err, tc.fails)
		}
	}
}
