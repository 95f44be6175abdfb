package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// logWriter sends a phase's progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestMain lets the test binary serve as the spawner of the rungs
// commands it measures (spawn.go).
func TestMain(m *testing.M) {
	Spawn()
	os.Exit(m.Run())
}

// buildRungs compiles the rungs binary the lab measures, once per test
// binary.
var buildRungs = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "rungs-lab-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "rungs")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/rungs-dev/rungs")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// TestScale runs the scale phase at a small N against the real broker, as
// users run it (the rungs binary, whose status and replay it measures), and
// checks correctness only: every message delivered once and none early, in
// the ladder apply declares by default on this broker's version, and a
// replay killed with SIGKILL that lost no dead letter. Its timings are not
// assertions.
func TestScale(t *testing.T) {
	env := brokertest.Require(t)
	bin, err := buildRungs()
	if err != nil {
		t.Fatal(err)
	}
	// The ladder flags pass through to rungs plan: 10 s holds the
	// delays in one level of 15 quorum rungs, where the default range
	// would declare 105, which a loaded machine takes minutes over.
	ctx := t.Context()
	l, err := DefaultLadder(ctx, bin, env.Config, "lab.scale", "--max-delay", "10s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Levels != 1 {
		t.Errorf("ladder %+v, want the one level --max-delay 10s asks for", l)
	}
	const n = 2000
	o := DefaultScaleOptions()
	o.N, o.MinDelay, o.MaxDelay = n, time.Second, 3*time.Second
	o.Ladder, o.Binary, o.Log = l, bin, logWriter{t}
	rep, err := RunScale(ctx, env.Config, env.Mgmt, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if rep.Confirmed != n || rep.Delivered != n || rep.Duplicates != 0 || rep.Early != 0 || rep.Lost != 0 {
		t.Errorf("confirmed %d, delivered %d of %d, %d duplicates, %d early, %d lost", rep.Confirmed, rep.Delivered, n, rep.Duplicates, rep.Early, rep.Lost)
	}
	v, ok := topology.ParseVersion(rep.Broker.RabbitMQ)
	if !ok {
		t.Fatalf("broker version %q", rep.Broker.RabbitMQ)
	}
	// Measured: before 3.13 a quorum ladder is prefix (BCC lost on a
	// dead-letter retry), from 3.13.3 direct; both radix 16.
	want := "direct"
	if v.LosesBCCOnDeadLetterRetry() {
		want = "prefix"
	}
	if l := rep.Ladder; l.Layout != want || l.QueueType != string(topology.Quorum) || l.Radix != topology.DefaultRadix {
		t.Errorf("RabbitMQ %s: scale ladder %+v, want %s, quorum, radix %d", v, l, want, topology.DefaultRadix)
	}
	if len(rep.Status) != 2 || len(rep.Refresh) != 2 {
		t.Errorf("%d status and %d refresh measurements, want 2 of each", len(rep.Status), len(rep.Refresh))
	}
	for _, c := range append(append([]CommandCost(nil), rep.Status...), rep.Refresh...) {
		if c.Err != "" || c.Requests == 0 || c.Bytes == 0 {
			t.Errorf("read cost %+v", c)
		}
	}
	for _, c := range rep.Status {
		if c.RSS == 0 {
			t.Errorf("status: no peak RSS sampled: %+v", c)
		}
	}
	rc := rep.Replay
	if rc == nil {
		t.Fatal("no replay measured")
	}
	if rc.Lost != 0 || rc.Delivered != n || rc.KilledAt == 0 || rc.AfterKillSource == 0 || rc.AfterKillSource+rc.AfterKillTarget < n {
		t.Errorf("replay %+v", *rc)
	}
	if md := rep.Markdown(); !strings.Contains(md, "## rungs-lab scale 2000") || !strings.Contains(md, "kill -9 at") {
		t.Errorf("markdown:\n%s", md)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

// The console phase in a smoke run: the observer's first read and its
// refresh each cost requests and bytes, its refresh one request, and the
// vhost is removed afterwards.
func TestConsole(t *testing.T) {
	env := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := RunConsole(ctx, env.Config, env.Mgmt, ConsoleOptions{Queues: 100, Smoke: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if c := rep.Console; c.StatsRequests != 1 || c.SnapshotRequests < 1 || c.StatsBytes == 0 || c.RenderNs == 0 || c.RowsNs == 0 || c.Ladders != 1 {
		t.Errorf("console cost %+v", c)
	}
	met := map[string]bool{}
	for _, tg := range rep.Targets {
		met[strings.Join(strings.Fields(tg.Name)[:2], " ")] = tg.Met
	}
	if got, ok := met["management requests"]; !ok || !got {
		t.Errorf("targets %+v: want one request per refresh, met", rep.Targets)
	}
	if _, ok := met["render a"]; !ok {
		t.Errorf("targets %+v: want the render target", rep.Targets)
	}
	if md := rep.Markdown(); !strings.Contains(md, "### Console cost (100 queues: 1 ladders of 28 rungs") || !strings.Contains(md, "### Targets") {
		t.Errorf("markdown:\n%s", md)
	}
	vs, err := env.Mgmt.Vhosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Its own vhost only: the lab command's tests make theirs at the same
	// time, in another package.
	if rep.Vhost == "" {
		t.Fatal("the report names no vhost")
	}
	for _, v := range vs {
		if v == rep.Vhost {
			t.Errorf("vhost %q was left behind", v)
		}
	}
}
