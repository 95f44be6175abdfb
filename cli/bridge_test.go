package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
)

// Bad bridge flags fail in one line before anything is read or changed.
func TestBridgeRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"bridge":                                     "--exchange is required",
		"bridge --exchange x --type x-delayed":       `exit type "x-delayed"`,
		"bridge --exchange x --exit x":               "must differ from the intake exchange",
		"bridge --exchange x --prefetch 0":           "--prefetch must be at least 1",
		"bridge --exchange x --copy-bindings-from x": "copy from another exchange",
		"bridge --exchange x --read-only":            "read-only",
	} {
		code, out, errs := run(t, offline, strings.Fields(args)...)
		if code == ExitOK || !strings.Contains(errs, want) || out != "" {
			t.Errorf("rungs %s: exit %d, stdout %q, stderr %q; want %q", args, code, out, errs, want)
		}
	}
}

// rungs bridge on the real broker: without --yes it creates nothing; with
// it, it declares its objects and the ladder, parks a message whose
// x-delay is not a number, and status and discover show the bridge with
// what it parked (--json too); it stops cleanly when its context ends.
func TestBridgeCommandParksAndStatusShowsIt(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	code, _, errs := run(t, env, "bridge", "--exchange", "orders.delayed", "--ladder", "delays", "--max-delay", "1h")
	if code == ExitOK || !strings.Contains(errs, "needs --yes") || !strings.Contains(errs, "queue orders.delayed.bridge.intake") {
		t.Fatalf("without --yes: exit %d, %s", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errb  bytes.Buffer
		exitc int
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := Run(ctx, []string{"bridge", "--exchange", "orders.delayed", "--ladder", "delays", "--max-delay", "1h", "--yes", "--status-every", "0", "--from-receipt"},
			IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: lockedWriter{&mu, &errb}, Getenv: func(k string) string { return env[k] }})
		exitc = c
	}()
	defer func() { cancel(); wg.Wait() }()
	conn := dial(t, cfg)
	testutil.Eventually(t, time.Minute, "the bridge to declare its intake exchange", func() error {
		pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer pcancel()
		_, err := conn.Publish(pctx, []broker.Message{{Exchange: "orders.delayed", RoutingKey: "eu", MessageID: "bad", Body: []byte("x"), Headers: map[string]any{"x-delay": "abc"}}})
		return err
	})
	// With --from-receipt, a message the broker stamped no receipt time on
	// (these test brokers run without the timestamp interceptor) is
	// scheduled from when the bridge takes it, and counted. It is published
	// once the exchange exists, outside the retries above: a retried batch
	// could put it in twice.
	pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
	defer pcancel()
	if _, err := conn.Publish(pctx, []broker.Message{{Exchange: "orders.delayed", RoutingKey: "eu", MessageID: "unstamped", Body: []byte("x"), Headers: map[string]any{"x-delay": int64(3_600_000)}}}); err != nil {
		t.Fatal(err)
	}
	// The ladder is declared before anything is consumed: a few hundred
	// declarations, which a loaded broker takes its time over.
	testutil.Poll{Within: 3 * time.Minute, Every: time.Second}.Eventually(t, "status to show the parked message", func() error {
		out := mustRun(t, env, "status")
		if !strings.Contains(out, "bridge orders.delayed: intake 0 messages") || !strings.Contains(out, "1 parked in orders.delayed.bridge.parked") {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Errorf("status:\n%s\nbridge's stderr:\n%s", out, errb.String())
		}
		return nil
	})
	if out := mustRun(t, env, "discover"); !strings.Contains(out, "bridge orders.delayed:") || !strings.Contains(out, "delays") {
		t.Errorf("discover does not show the bridge and its ladder:\n%s", out)
	}
	// --json carries the bridge as the text does, with what it parked.
	for _, cmd := range []string{"status", "discover"} {
		var got struct {
			Ladders []struct{ Ladder struct{ Name string } }
			Bridges []jsonBridge
		}
		out := mustRun(t, env, cmd, "--json")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s --json: %v\n%s", cmd, err, out)
		}
		if len(got.Bridges) != 1 || got.Bridges[0].Exchange != "orders.delayed" || got.Bridges[0].Parked != "orders.delayed.bridge.parked" ||
			got.Bridges[0].ParkedMessages == nil || *got.Bridges[0].ParkedMessages != 1 || got.Bridges[0].IntakeMessages != 0 ||
			len(got.Ladders) != 1 || got.Ladders[0].Ladder.Name != "delays" {
			t.Errorf("%s --json: want the ladder delays and the bridge with 1 parked:\n%s", cmd, out)
		}
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if exitc != ExitOK || !strings.Contains(errb.String(), "stopped: taken 2: 1 scheduled, 0 delivered now, 1 parked") ||
		!strings.Contains(errb.String(), "1 without timestamp_in_ms, counted from when taken") {
		t.Errorf("bridge: exit %d\n%s", exitc, errb.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
