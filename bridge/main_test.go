package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// childEnv carries a child bridge's setup: the test binary, run again
// with it set, is a bridge process the test can kill -9 (as an operator's
// OOM killer or a lost node would), not a goroutine that dies politely.
const childEnv = "RUNGS_BRIDGE_TEST_CHILD"

// childSetup is what a child bridge needs to start.
type childSetup struct {
	Config   broker.Config
	Exchange string
	Ladder   string
	Version  string
	Levels   int
}

func TestMain(m *testing.M) {
	if s := os.Getenv(childEnv); s != "" {
		os.Exit(runChild(s))
	}
	testutil.Main(m, 3)
}

// testOptions are the options of the bridge the tests run: exchange ex
// and the default ladder named ladder, delivering to ex's due queue, on
// release v.
func testOptions(vhost, ex, ladder string, v topology.Version) (bridge.Options, error) {
	return testLadderOptions(vhost, ex, ladder, 0, v)
}

// testLadderOptions is testOptions with a ladder of levels levels (0: the
// default). The kill test's delays fit in 2 levels (4m15s): 30 quorum
// rungs instead of 105, which a loaded 4.3.6 took seconds each to declare.
func testLadderOptions(vhost, ex, ladder string, levels int, v topology.Version) (bridge.Options, error) {
	names := topology.NamesOfBridge(ex, "")
	l, err := topology.Ladder{Name: ladder, Vhost: vhost, Levels: levels, Targets: []string{names.Due}}.Normalize()
	if err != nil {
		return bridge.Options{}, err
	}
	return bridge.Options{
		Names: names, ExitType: "direct", Ladder: l, LadderPlan: l.Plan().ForRelease(v), Version: v,
	}, nil
}

// runChild runs a bridge until SIGTERM (or SIGKILL, which is the point),
// printing its progress as JSON lines on stdout for the parent to read.
func runChild(setup string) int {
	var s childSetup
	if err := json.Unmarshal([]byte(setup), &s); err != nil {
		fmt.Fprintln(os.Stderr, "child setup:", err)
		return 2
	}
	v, _ := topology.ParseVersion(s.Version)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	conn, err := broker.Dial(ctx, s.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child dial:", err)
		return 2
	}
	defer conn.Close()
	o, err := testLadderOptions(s.Config.Vhost, s.Exchange, s.Ladder, s.Levels, v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child options:", err)
		return 2
	}
	o.Log = os.Stderr
	pub, err := broker.Dial(ctx, s.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child dial:", err)
		return 2
	}
	defer pub.Close()
	o.Publish = pub
	b, err := bridge.New(conn, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child bridge:", err)
		return 2
	}
	if err := b.Declare(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child declare:", err)
		return 2
	}
	go func() {
		enc := json.NewEncoder(os.Stdout)
		for ctx.Err() == nil {
			_ = enc.Encode(b.Progress())
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if err := b.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child run:", err)
		return 1
	}
	return 0
}

// declared is a bridge over conn with o, its objects and ladder declared.
func declared(tb testing.TB, ctx context.Context, conn *broker.Conn, o bridge.Options) *bridge.Bridge {
	tb.Helper()
	b, err := bridge.New(conn, o)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Declare(ctx); err != nil {
		tb.Fatal(err)
	}
	return b
}

// declareDests declares a quorum destination queue for each routing key,
// bound to the exit exchange by that key (queues maps key to queue).
func declareDests(tb testing.TB, ctx context.Context, conn *broker.Conn, exit string, queues map[string]string) {
	tb.Helper()
	var p topology.Plan
	for key, q := range queues {
		p.Queues = append(p.Queues, topology.Queue{Name: q, Durable: true, Args: topology.Args{"x-queue-type": "quorum"}})
		p.Bindings = append(p.Bindings, topology.Binding{Source: exit, Destination: q, DestinationType: topology.ToQueue, RoutingKey: key})
	}
	if _, err := conn.Apply(ctx, p); err != nil {
		tb.Fatal(err)
	}
}

// testVhost is a vhost of the test's own, the broker's release and a
// connection to the vhost, closed when the test ends.
func testVhost(tb testing.TB, ctx context.Context, env brokertest.Env) (broker.Config, topology.Version, *broker.Conn) {
	tb.Helper()
	cfg := env.NewVhost(tb)
	v, err := env.Mgmt.Version(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return cfg, v, conn
}
