// Package e2e drives the built rungs binary in a real terminal (tmux)
// against the real broker, the way an operator uses it.
//
// The harness, for a new test:
//
//   - rungsBinary(t) is the rungs binary, linked once per test binary (the
//     first caller links it; TestMain removes it at the end). rungs and
//     mustRungs run it; startRungs runs it in the background.
//   - newTerm(t, w, h, env, command) runs a command in a tmux session of the
//     test's own, on a tmux server of this test binary's own (its own
//     socket), so tests in parallel, and people's own tmux sessions, never
//     see each other. waitFor/waitGone poll its screen.
//   - brokertest.NewVhost(t) gives a vhost of the test's own on the shared
//     broker; startNode(t, role, …) a RabbitMQ node of its own (its own
//     name, state directory and ports) for tests that stop or restart one.
//   - testutil.Eventually / Until for any other wait.
//
// Every test calls t.Parallel, and all of them run at once (TestMain sets
// -parallel): the tests wait on brokers and clocks far more than they
// compute, so they overlap well even on two cores. The tests that own a
// node take turns (startNode holds a turn until its node is down, or
// until the test calls n.release() because only idle waiting is left). A
// test that must not overlap another says why and leaves t.Parallel out.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rungs-dev/rungs/internal/testutil"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string

	// tmuxSocket names this test binary's own tmux server (tmux -L).
	tmuxSocket = fmt.Sprintf("rungs-e2e-%d", os.Getpid())
	tmuxUsed   atomic.Bool
	termSeq    atomic.Int64
)

// parallelDefault is how many e2e tests run at once unless -parallel says
// otherwise: all of them. Go's default is GOMAXPROCS, which on a two-core
// machine would run them two by two, though they spend their time waiting
// on brokers, restarts and delays, not computing.
const parallelDefault = 16

// TestMain runs every test side by side (parallelDefault) and removes what
// the tests share once they have all ended: the binary rungsBinary linked
// and the tmux server.
func TestMain(m *testing.M) {
	testutil.DefaultParallel(parallelDefault)
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	if tmuxUsed.Load() {
		_ = exec.Command("tmux", "-L", tmuxSocket, "kill-server").Run()
	}
	os.Exit(code)
}

// rungsBinary links rungs once per test binary; tests running in parallel
// wait for the first one's link.
func rungsBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "rungs-e2e-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rungs")
		out, err := exec.Command("go", "build", "-o", binPath, "..").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// tmux runs a tmux command on this test binary's server.
func tmux(args ...string) *exec.Cmd {
	tmuxUsed.Store(true)
	return exec.Command("tmux", append([]string{"-L", tmuxSocket}, args...)...)
}

// uniqueName is prefix with a number no other call in this test binary
// gets: for tmux sessions and node names of tests running side by side.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), termSeq.Add(1))
}
