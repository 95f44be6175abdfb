package e2e

// Faults: the broker restarting under a long publish and an open console,
// the management API hanging or refusing while AMQP is up and the reverse,
// and rungs whose messages stop expiring. Every test that stops or
// restarts a broker starts a node of its own with scripts/broker.sh (its
// own name, state directory and ports) and stops it when it ends; the
// shared broker is only ever used through vhosts of a test's own and
// proxies in front of it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// result is one finished rungs invocation.
type result struct {
	code        int
	out, errOut string
}

// rungs runs the binary with env added to the environment.
func rungs(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(rungsBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out: out.String(), errOut: errb.String()}
	var xe *exec.ExitError
	switch {
	case errors.As(err, &xe):
		r.code = xe.ExitCode()
	case err != nil:
		t.Fatalf("rungs %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRungs runs the binary and fails the test unless it exits 0.
func mustRungs(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := rungs(t, env, args...)
	if r.code != 0 {
		t.Fatalf("rungs %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.out, r.errOut)
	}
	return r.out
}

// node is a RabbitMQ node of a test's own, run by scripts/broker.sh from a
// state directory of its own on free loopback ports, so that stopping and
// restarting it disturbs nobody else.
type node struct {
	t                *testing.T
	name, dir        string
	amqp, mgmt, dist int
	extraPorts       []int
	env              []string // the broker.sh parameters
	lastOutput       string
	release          func() // ends the node's turn early; see startNode
}

// startNode starts a node named rungs-ROLE-PID-N@localhost and stops it (and
// removes its state) when the test ends. extra, if not nil, adds broker.sh
// parameters (e.g. RUNGS_TLS_CERT_DIR) given extraPorts more free ports.
func startNode(t *testing.T, role string, extraPorts int, extra func(ports []int) []string) *node {
	t.Helper()
	// One node of a test's own at a time (nodeTurns says why). A test
	// whose node has only idle waiting left (messages resting in a long
	// rung) may call n.release() to let the next one start.
	release := nodeTurns.take(role)
	t.Cleanup(release)
	dir, err := os.MkdirTemp("", "rungs-"+role+"-")
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3+extraPorts)
	n := &node{
		t: t, dir: dir, name: uniqueName("rungs-"+role) + "@localhost",
		amqp: ports[0], mgmt: ports[1], dist: ports[2], extraPorts: ports[3:],
		release: release,
	}
	n.env = []string{
		"RUNGS_NODENAME=" + n.name, "RUNGS_BROKER_DIR=" + dir,
		"RUNGS_AMQP_PORT=" + strconv.Itoa(n.amqp), "RUNGS_MGMT_PORT=" + strconv.Itoa(n.mgmt),
		"RUNGS_DIST_PORT=" + strconv.Itoa(n.dist),
	}
	if extra != nil {
		n.env = append(n.env, extra(n.extraPorts)...)
	}
	t.Cleanup(func() {
		if err := n.brokerScript("down"); err != nil {
			t.Errorf("stop %s: %v", n.name, err)
			return
		}
		_ = os.RemoveAll(dir)
	})
	n.must("up")
	return n
}

// freePorts returns n loopback ports nothing listens on right now, none
// of which it returned before to this test binary: tests that start nodes
// side by side must not be handed the same port between one test closing
// its probe and its node binding the port.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		if p := l.Addr().(*net.TCPAddr).Port; !portsGiven[p] {
			portsGiven[p] = true
			ports = append(ports, p)
		}
	}
	return ports
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// brokerScript runs scripts/broker.sh for this node.
func (n *node) brokerScript(args ...string) error {
	cmd := exec.Command("bash", append([]string{"../scripts/broker.sh"}, args...)...)
	cmd.Env = append(os.Environ(), n.env...)
	out, err := cmd.CombinedOutput()
	n.lastOutput = string(out)
	if err != nil {
		return fmt.Errorf("broker.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (n *node) must(args ...string) {
	n.t.Helper()
	if err := n.brokerScript(args...); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) url() string     { return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", n.amqp) }
func (n *node) mgmtURL() string { return fmt.Sprintf("http://127.0.0.1:%d", n.mgmt) }

// rungsEnv points rungs at the node's default vhost.
func (n *node) rungsEnv() []string {
	return []string{"RUNGS_URL=" + n.url(), "RUNGS_MGMT_URL=" + n.mgmtURL(), "RUNGS_VHOST=/"}
}

func (n *node) config() broker.Config {
	return broker.Config{URL: n.url(), MgmtURL: n.mgmtURL()}
}

// proxy is a TCP proxy a test can switch between passing traffic through,
// hanging (accepting connections and never answering) and refusing
// (nothing listens). Every switch cuts the connections open at that
// moment, as a failing network or a restarting server would.
type proxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	mode  string
	ln    net.Listener
	conns map[net.Conn]bool
}

const (
	proxyPass   = "pass"
	proxyHang   = "hang"
	proxyRefuse = "refuse"
)

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{t: t, target: target, mode: proxyPass, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr, p.ln = ln.Addr().String(), ln
	go p.serve(ln)
	t.Cleanup(func() { p.set(proxyRefuse) })
	return p
}

// set switches the mode and cuts every open connection.
func (p *proxy) set(mode string) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
	p.mode = mode
	switch {
	case mode == proxyRefuse && p.ln != nil:
		p.ln.Close()
		p.ln = nil
	case mode != proxyRefuse && p.ln == nil:
		// The port may linger a moment after the close.
		testutil.Eventually(p.t, 5*time.Second, "the proxy to listen again on "+p.addr, func() error {
			ln, err := net.Listen("tcp", p.addr)
			if err != nil {
				return err
			}
			p.ln = ln
			go p.serve(ln)
			return nil
		})
	}
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		p.conns[c] = true
		p.mu.Unlock()
		if mode == proxyHang {
			go func() { _, _ = io.Copy(io.Discard, c) }()
			continue
		}
		go p.pipe(c)
	}
}

func (p *proxy) pipe(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if !p.conns[c] {
		// Cut while dialling.
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[up] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// hostPort is a URL's host:port.
func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// publishReport is rungs publish --json's report.
type publishReport struct {
	Requested int `json:"requested"`
	Confirmed int `json:"confirmed"`
	Returned  int `json:"returned"`
	Nacked    int `json:"nacked"`
	Failed    int `json:"failed"`
	DelayMS   int `json:"delay_ms"`
}

// arrivals is what a consumer saw of messages published with --id-prefix.
type arrivals struct {
	seen       map[int]int // sequence number → deliveries
	total      int
	early      []string
	foreign    []string
	lastArrive time.Time
}

func newArrivals() *arrivals { return &arrivals{seen: map[int]int{}} }

// record checks one delivery: its id is PREFIXn with 1 ≤ n ≤ count, and it
// did not arrive before notBefore (when it was published at the earliest)
// plus the delay it asked for.
func (a *arrivals) record(d broker.Delivery, prefix string, count int, notBefore time.Time) {
	a.total++
	a.lastArrive = d.Received
	n, err := strconv.Atoi(strings.TrimPrefix(d.MessageID, prefix))
	if !strings.HasPrefix(d.MessageID, prefix) || err != nil || n < 1 || n > count {
		a.foreign = append(a.foreign, d.MessageID)
		return
	}
	a.seen[n]++
	delay, _ := d.Headers["x-rungs-delay-ms"].(int64)
	published := notBefore
	if d.Timestamp.After(published) {
		// The timestamp property is whole seconds, rounded down.
		published = d.Timestamp
	}
	if due := published.Add(time.Duration(delay) * time.Millisecond); d.Received.Before(due) {
		a.early = append(a.early, fmt.Sprintf("%s %s early", d.MessageID, due.Sub(d.Received)))
	}
}

// recordReplayed checks a copy that rungs replay sent into a ladder with
// delay: it must not arrive before it was replayed (x-rungs-replayed-at,
// whole seconds) plus delay.
func (a *arrivals) recordReplayed(d broker.Delivery, prefix string, count int, notBefore time.Time, delay time.Duration) {
	at, _ := d.Headers["x-rungs-replayed-at"].(time.Time)
	if at.After(notBefore) {
		notBefore = at
	}
	d.Timestamp = time.Time{}
	if d.Headers == nil {
		d.Headers = map[string]any{}
	}
	d.Headers["x-rungs-delay-ms"] = delay.Milliseconds()
	a.record(d, prefix, count, notBefore)
}

func (a *arrivals) duplicates() int { return a.total - len(a.seen) - len(a.foreign) }

// consumeUntil consumes queue from cfg's broker, acking every message,
// until done says so, nothing arrived for quiet, or within runs out. It
// consumes again after a dropped connection.
func consumeUntil(t *testing.T, cfg broker.Config, queue string, within, quiet time.Duration, each func(broker.Delivery), done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	defer conn.Close()
	last := time.Now()
	for ctx.Err() == nil && !done() {
		cctx, ccancel := context.WithCancel(ctx)
		ds, err := conn.Consume(cctx, queue, 500)
		if err != nil {
			ccancel()
			if ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		idle := time.NewTimer(time.Second)
	read:
		for {
			select {
			case d, ok := <-ds:
				if !ok {
					break read
				}
				each(d)
				if err := d.Ack(); err != nil {
					break read
				}
				last = time.Now()
				if done() {
					break read
				}
			case <-idle.C:
				// done may turn true with time alone (a quiet spell after
				// the last expected message), not only on a delivery.
				if done() || time.Since(last) > quiet {
					ccancel()
					idle.Stop()
					return
				}
				idle.Reset(time.Second)
			}
		}
		idle.Stop()
		ccancel()
	}
}

// running is a rungs command started in the background.
type running struct {
	cmd       *exec.Cmd
	out, err  bytes.Buffer
	exited    chan error
	took      time.Duration
	exitErr   error
	ended     bool
	startedAt time.Time
}

// startRungs starts the binary and kills it if the test ends first.
func startRungs(t *testing.T, env []string, args ...string) *running {
	t.Helper()
	r := &running{cmd: exec.Command(rungsBinary(t), args...), exited: make(chan error, 1)}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
	r.startedAt = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.took = time.Since(r.startedAt)
		r.exited <- err
	}()
	t.Cleanup(func() {
		if !r.ended {
			_ = r.cmd.Process.Kill()
		}
	})
	return r
}

// poll notes whether the command has ended, without waiting.
func (r *running) poll() bool {
	if !r.ended {
		select {
		case r.exitErr = <-r.exited:
			r.ended = true
		default:
		}
	}
	return r.ended
}

// killWhen sends SIGKILL as soon as ready reports true, checking every
// 20 ms while the command runs, and waits for it to end. It reports
// whether the kill came before the command ended by itself.
func (r *running) killWhen(t *testing.T, ready func() bool) bool {
	t.Helper()
	for !r.poll() {
		if ready() {
			_ = r.cmd.Process.Signal(syscall.SIGKILL)
			r.wait(t, time.Minute)
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// wait waits for the command to end, failing the test after within.
func (r *running) wait(t *testing.T, within time.Duration) {
	t.Helper()
	if r.ended {
		return
	}
	select {
	case r.exitErr = <-r.exited:
		r.ended = true
	case <-time.After(within):
		// Go prints every goroutine's stack on SIGQUIT: say where it hangs.
		_ = r.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-r.exited:
			r.ended = true
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%v did not end within %s\nstdout: %s\nstderr: %s", r.cmd.Args[1:], within, r.out.String(), r.err.String())
	}
}

// checkOneLine checks that a failed command said why in one line naming want.
func (r *running) checkOneLine(t *testing.T, want string) {
	t.Helper()
	line := strings.TrimRight(r.err.String(), "\n")
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "rungs: ") || !strings.Contains(line, want) {
		t.Errorf("%v failed without one clear line naming %q:\n%s", r.cmd.Args[1:2], want, line)
	}
}

// fillQueue declares a durable queue and puts n persistent messages in it
// with the ids PREFIX1..PREFIXn.
func fillQueue(t *testing.T, cfg broker.Config, queue, prefix string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Apply(ctx, topology.Plan{Queues: []topology.Queue{{Name: queue, Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	for sent := 0; sent < n; {
		batch := make([]broker.Message, min(5000, n-sent))
		for i := range batch {
			batch[i] = broker.Message{RoutingKey: queue, MessageID: prefix + strconv.Itoa(sent+i+1), Persistent: true, Timestamp: time.Now()}
		}
		if res, err := conn.Publish(ctx, batch); err != nil || res.Confirmed != len(batch) {
			t.Fatalf("fill %s: %+v %v", queue, res, err)
		}
		sent += len(batch)
	}
}

// drainIDs takes every message off a queue and returns their ids.
func drainIDs(t *testing.T, cfg broker.Config, queue string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ids := map[string]int{}
	// A consumer with a window, not one basic.get a message: 18,000 gets
	// took longer than two minutes on a loaded CI machine. What the queue
	// held when the drain began is taken; Get then takes any stragglers.
	n, err := conn.Depth(ctx, queue)
	if err != nil {
		t.Fatalf("drain %s: %v", queue, err)
	}
	if n > 0 {
		cctx, stop := context.WithCancel(ctx)
		in, err := conn.Consume(cctx, queue, 1000)
		if err != nil {
			t.Fatalf("drain %s: %v", queue, err)
		}
		for got := 0; got < n; got++ {
			d, ok := <-in
			if !ok {
				t.Fatalf("drain %s: took %d of %d: %v", queue, got, n, ctx.Err())
			}
			if err := d.Ack(); err != nil {
				t.Fatalf("drain %s: %v", queue, err)
			}
			ids[d.MessageID]++
		}
		stop()
	}
	for {
		d, ok, err := conn.Get(ctx, queue, true)
		if err != nil {
			t.Fatalf("drain %s: %v", queue, err)
		}
		if !ok {
			return ids
		}
		ids[d.MessageID]++
	}
}

// replayReport is rungs replay --json's report.
type replayReport struct {
	Moved      int    `json:"moved"`
	Parked     int    `json:"parked"`
	Kept       int    `json:"kept"`
	Unknown    int    `json:"unknown"`
	Reconnects int    `json:"reconnects"`
	Stopped    string `json:"stopped"`
}

// TestFaultBrokerRestart restarts a node of its own under a long publish
// into a durable classic ladder, a long replay into a quorum ladder, and an
// open console. The console must show the outage with a reconnect
// countdown and come back by itself; the publish and the replay must
// finish or stop with a clear error and exact counts; every confirmed
// message must arrive, none early, and every replayed message must be at
// the ladder's end or still on its source, never neither.
//
// The published messages rest in one long rung (102.4s) while the broker
// stops and is down: long enough to cover a stop that takes over a minute
// on a loaded machine (measured: 52 s and 70 s at load 30-70 with the
// other e2e tests beside it; with a 25.6 s rung, messages published first
// expired during such a stop and 129 of 17,006 were lost between rungs).
// The replayed ones are moving from rung to rung, which only a quorum
// ladder survives: RabbitMQ dead-letters from classic queues at most once,
// so a classic ladder can lose messages that are between two rungs when a
// node stops.
func TestFaultBrokerRestart(t *testing.T) {
	t.Parallel()
	n := startNode(t, "fault", 0, nil)
	env := n.rungsEnv()
	const (
		ladder  = "fault" // classic
		count   = 100000  // published with 102.5s: 102.4s in rung 10, then 100ms
		prefix  = "r-"
		qladder = "faultq" // quorum
		parked  = "fault.parked"
		replays = 30000 // replayed from parked into faultq with 3s: four rungs
		pprefix = "p-"
		rdelay  = 3 * time.Second
	)
	mustRungs(t, env, "apply", "--ladder", ladder, "--unit", "100ms", "--levels", "11", "--radix", "2", "--queue-type", "classic")
	mustRungs(t, env, "apply", "--ladder", qladder, "--unit", "100ms", "--levels", "10", "--radix", "2", "--queue-type", "quorum")
	fillQueue(t, n.config(), parked, pprefix, replays)

	m := newTerm(t, 160, 40, env, rungsBinary(t)+" --ladder "+ladder+" --refresh 1s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › "+ladder), 30*time.Second)
	m.waitFor("a live connection", text("● connected"), 10*time.Second)

	// Paced so that the broker goes down in the middle of both however
	// fast this machine is: at least 10 s of work each, the outage after 1 s.
	pub := startRungs(t, env, "publish", "--ladder", ladder, "--delay", "102.5s",
		"--count", strconv.Itoa(count), "--id-prefix", prefix, "--rate", strconv.Itoa(count/10)+"/s", "--json")
	rp := startRungs(t, env, "replay", "--from", parked, "--to-ladder", qladder, "--delay", "3s",
		"--rate", strconv.Itoa(replays/10)+"/s", "--yes", "--json")
	t0 := pub.startedAt
	time.Sleep(time.Second)

	stopAt := time.Now()
	n.must("down")
	downAt := time.Now()
	// The publish stops when the connection drops (messages awaiting a
	// confirm have an unknown outcome) or waits for the broker; the replay
	// waits and resumes. Neither may have finished before the outage.
	for _, r := range []*running{pub, rp} {
		if r.poll() && r.exitErr == nil {
			t.Fatalf("%v finished before the broker went down; slow its --rate\n%s", r.cmd.Args[1:2], r.out.String())
		}
	}
	// The outage, with a countdown to the next attempt.
	countdown := regexp.MustCompile(`reconnecting (in \d+s|now)( \(attempt \d+\))?`)
	s := m.waitFor("the reconnect countdown", countdown, 30*time.Second)
	countdowns := map[string]bool{countdown.FindString(s): true}
	if err := (testutil.Poll{Within: 10 * time.Second, Every: 200 * time.Millisecond}).Until(t, func() error {
		if c := countdown.FindString(m.screen()); c != "" {
			countdowns[c] = true
		}
		if len(countdowns) < 2 {
			return fmt.Errorf("only %v", countdowns)
		}
		return nil
	}); err != nil {
		t.Errorf("the countdown did not move: %v", err)
	}
	m.waitFor("the stale-data marker", text("stale since"), 15*time.Second)

	n.must("up")
	upAt := time.Now()
	m.waitFor("the console connected again", text("● connected"), 30*time.Second)
	m.waitGone("the stale-data marker", text("stale since"), 30*time.Second)
	reconnect := time.Since(upAt)
	t.Logf("broker stopped in %s (down at +%s), back up %s later; console reconnected %s after the broker answered; countdowns seen %v",
		downAt.Sub(stopAt).Round(time.Millisecond), downAt.Sub(t0).Round(time.Millisecond),
		upAt.Sub(downAt).Round(time.Millisecond), reconnect.Round(time.Millisecond), countdowns)

	// The publish: exact counts, and one clear line if it stopped.
	pub.wait(t, 2*time.Minute)
	var rep publishReport
	if err := json.Unmarshal(pub.out.Bytes(), &rep); err != nil {
		t.Fatalf("publish --json: %v\nstdout: %s\nstderr: %s", err, pub.out.String(), pub.err.String())
	}
	if rep.Requested != count || rep.Confirmed+rep.Returned+rep.Nacked+rep.Failed > count {
		t.Fatalf("inconsistent publish counts: %+v", rep)
	}
	if pub.exitErr != nil {
		pub.checkOneLine(t, fmt.Sprintf("publish stopped after %d of %d messages were confirmed", rep.Confirmed, count))
	} else if rep.Confirmed != count {
		t.Errorf("publish exited 0 with %d of %d confirmed", rep.Confirmed, count)
	}
	t.Logf("publish: %+v in %s (exit %v)", rep, pub.took.Round(time.Millisecond), pub.exitErr)

	// The replay: it resumes after the outage, or says why it stopped.
	rp.wait(t, 2*time.Minute)
	var rrep replayReport
	if err := json.Unmarshal(rp.out.Bytes(), &rrep); err != nil {
		t.Fatalf("replay --json: %v\nstdout: %s\nstderr: %s", err, rp.out.String(), rp.err.String())
	}
	if rp.exitErr != nil {
		rp.checkOneLine(t, parked)
	} else if rrep.Reconnects == 0 {
		t.Errorf("the replay finished without noticing the restart: %+v", rrep)
	}
	left := drainIDs(t, n.config(), parked)
	t.Logf("replay: %+v in %s (exit %v); %d left on %s", rrep, rp.took.Round(time.Millisecond), rp.exitErr, len(left), parked)
	// The outage is over and nothing more is sent: what is left is waiting
	// for the 102.4s rung to expire, which need not hold up the next
	// node-owning test.
	n.release()
	if rrep.Moved+len(left) < replays {
		t.Errorf("replay moved %d and left %d of %d", rrep.Moved, len(left), replays)
	}

	// Every confirmed message arrives, none early; duplicates are allowed
	// and counted. Messages of unknown outcome (failed) may or may not.
	got, replayed := newArrivals(), newArrivals()
	// Generous bounds: a loaded machine (or the other tests beside this
	// one) slows the ladder's dead-lettering, and a message that arrives
	// late still arrives; a pass ends as soon as every message is in.
	consumeUntil(t, n.config(), qladder+".done", 5*time.Minute, time.Minute,
		func(d broker.Delivery) { replayed.recordReplayed(d, pprefix, replays, rp.startedAt, rdelay) },
		func() bool { return len(replayed.seen)+len(left) >= replays })
	// The first published messages arrive 102.5 s after the publish began,
	// perhaps long after this consumer starts: a quiet of two minutes.
	consumeUntil(t, n.config(), ladder+".done", 5*time.Minute, 2*time.Minute,
		func(d broker.Delivery) { got.record(d, prefix, count, t0) },
		func() bool { return len(got.seen) >= rep.Confirmed+rep.Failed })
	t.Logf("published, arrived: %d deliveries, %d distinct, %d duplicates, %d early, %d foreign",
		got.total, len(got.seen), got.duplicates(), len(got.early), len(got.foreign))
	if len(got.seen) < rep.Confirmed {
		t.Errorf("lost: %d distinct messages arrived, %d were confirmed", len(got.seen), rep.Confirmed)
	}
	if len(got.seen) > rep.Confirmed+rep.Failed {
		t.Errorf("unexpected: %d distinct messages arrived, at most %d (confirmed + unknown) could", len(got.seen), rep.Confirmed+rep.Failed)
	}
	for what, a := range map[string]*arrivals{"published": got, "replayed": replayed} {
		if len(a.early) > 0 {
			t.Errorf("%d %s messages arrived early, e.g. %v", len(a.early), what, a.early[:min(5, len(a.early))])
		}
		if len(a.foreign) > 0 {
			t.Errorf("%d %s messages nobody sent, e.g. %v", len(a.foreign), what, a.foreign[:min(5, len(a.foreign))])
		}
	}
	// Replayed: at the end of the ladder or still on the source, never
	// neither. A copy in both places or twice at the end is a duplicate:
	// the replay counts those whose confirm the outage cut off as unknown,
	// and at-least-once dead-lettering may repeat a message between rungs.
	var lost []string
	both := 0
	for i := 1; i <= replays; i++ {
		id := pprefix + strconv.Itoa(i)
		switch {
		case replayed.seen[i] == 0 && left[id] == 0:
			lost = append(lost, id)
		case replayed.seen[i] > 0 && left[id] > 0:
			both++
		}
	}
	dups := replayed.duplicates() + both
	t.Logf("replayed, arrived: %d deliveries, %d distinct, %d duplicates (%d also left on the source; the replay reported %d of unknown outcome), %d early",
		replayed.total, len(replayed.seen), dups, both, rrep.Unknown, len(replayed.early))
	if len(lost) > 0 {
		t.Errorf("%d replayed messages are neither at the end of the ladder nor on %s, e.g. %v", len(lost), parked, lost[:min(5, len(lost))])
	}
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)
}

// TestFaultManagementDown keeps AMQP up while the management API first
// hangs, then refuses connections: the console keeps the last data, marks
// it stale with the reason, keeps answering keys, and recovers by itself.
func TestFaultManagementDown(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	p := newProxy(t, hostPort(t, cfg.MgmtURL))
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=http://" + p.addr, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, env, "apply", "--ladder", "mg", "--levels", "6", "--radix", "2")

	m := newTerm(t, 160, 40, env, rungsBinary(t)+" --ladder mg --refresh 1s --timeout 2s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › mg"), 30*time.Second)

	check := func(phase string, reason *regexp.Regexp) {
		t.Helper()
		t0 := time.Now()
		s := m.waitFor(phase+": the stale marker", text("stale since"), 20*time.Second)
		s = m.waitFor(phase+": the reason", reason, 20*time.Second)
		t.Logf("%s: marked stale within %s", phase, time.Since(t0).Round(100*time.Millisecond))
		if !strings.Contains(s, "mg.rung.05") || !strings.Contains(s, "● connected") {
			t.Errorf("%s: the last data or the AMQP state is gone:\n%s", phase, s)
		}
		// The console still answers: help opens and closes, a trace is
		// computed and shown.
		m.keys("?")
		m.waitFor(phase+": the help", text("Keys and commands"), 5*time.Second)
		m.keys("?")
		m.waitGone(phase+": the help", text("Keys and commands"), 5*time.Second)
		m.keys("t")
		m.typeText("5s")
		m.waitFor(phase+": a trace", text("trace 5s → mg.done"), 5*time.Second)
		m.keys("Enter")
	}
	p.set(proxyHang)
	check("hanging", regexp.MustCompile(`no answer\s+within\s+2s`))
	p.set(proxyRefuse)
	check("refusing", regexp.MustCompile(`connection\s+refused`))

	p.set(proxyPass)
	t0 := time.Now()
	m.waitGone("the stale marker", text("stale since"), 20*time.Second)
	m.waitFor("fresh data", text("↻ "), 5*time.Second)
	t.Logf("recovered %s after the management API came back", time.Since(t0).Round(100*time.Millisecond))
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)
}

// TestFaultAMQPDown cuts AMQP while the management API stays up: the
// console shows the reconnect countdown, keeps refreshing depths, takes a
// publish that waits for the connection, and reconnects by itself.
func TestFaultAMQPDown(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	p := newProxy(t, hostPort(t, cfg.URL))
	direct := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	env := []string{"RUNGS_URL=amqp://guest:guest@" + p.addr + "/", "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, direct, "apply", "--ladder", "am", "--levels", "8", "--radix", "2")

	m := newTerm(t, 160, 40, env, rungsBinary(t)+" --ladder am --refresh 1s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › am"), 30*time.Second)
	m.waitFor("a live connection", text("● connected"), 10*time.Second)

	p.set(proxyRefuse)
	t0 := time.Now()
	m.waitFor("the reconnect countdown", regexp.MustCompile(`reconnecting (in \d+s|now)`), 20*time.Second)
	t.Logf("outage shown after %s", time.Since(t0).Round(100*time.Millisecond))

	// Depths still refresh through the management API.
	mustRungs(t, direct, "publish", "--ladder", "am", "--delay", "100s", "--count", "4")
	m.waitFor("the new depth", regexp.MustCompile(`am\.rung\.06\s+1m4s\s+4\s`), 20*time.Second)

	// A publish from the console waits for the connection; the screen
	// stays live meanwhile.
	m.keys("p")
	m.waitFor("the publish form", text("Publish into am"), 5*time.Second)
	m.typeText("40s")
	m.keys("Enter")
	m.waitFor("the publish in progress", text("publishing 1 to am.ingest"), 5*time.Second)
	m.keys("?")
	m.waitFor("the help while publishing", text("Keys and commands"), 5*time.Second)
	m.keys("?")

	p.set(proxyPass)
	t1 := time.Now()
	m.waitFor("the console connected again", text("● connected"), 30*time.Second)
	t.Logf("reconnected %s after AMQP came back", time.Since(t1).Round(100*time.Millisecond))
	m.waitFor("the publish result", text("1 confirmed"), 30*time.Second)
	m.waitFor("the published message in its rung", regexp.MustCompile(`am\.rung\.05\s+32s\s+1\s`), 20*time.Second)
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)
}

// TestFaultStuckRung makes two rungs stop expiring their messages and
// checks that the console and rungs status flag them: one whose messages a
// consumer holds unacknowledged (RabbitMQ never expires those), and one
// whose TTL was raised by hand, so that messages sit far longer than the
// ladder says they can.
func TestFaultStuckRung(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, env, "apply", "--ladder", "st", "--unit", "1s", "--levels", "4", "--radix", "2", "--queue-type", "classic")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	// st.rung.01 (2s): a consumer takes its messages and never acks them.
	held, err := conn.Consume(ctx, "st.rung.01", 10)
	if err != nil {
		t.Fatal(err)
	}
	mustRungs(t, env, "publish", "--ladder", "st", "--delay", "2s", "--count", "3")
	for i := 0; i < 3; i++ {
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatalf("the consumer on st.rung.01 got %d of 3 messages", i)
		}
	}

	// st.rung.03 (8s): redeclared by hand with a TTL of an hour.
	// rungs publish refuses to route through a rung that drifted; an
	// application does not ask.
	tr := raiseTTL(t, conn, cfg.Vhost, "st.rung.03", time.Hour, 8*time.Second)
	msg := broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Persistent: true, Timestamp: time.Now()}
	if res, err := conn.Publish(ctx, []broker.Message{msg, msg}); err != nil || res.Confirmed != 2 {
		t.Fatalf("publish into st.rung.03: %+v %v", res, err)
	}

	m := newTerm(t, 160, 40, env, rungsBinary(t)+" --ladder st --refresh 1s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › st"), 30*time.Second)
	t0 := time.Now()
	s := m.waitFor("both rungs flagged", text("✗ 2 stuck"), 60*time.Second)
	t.Logf("the console flagged both rungs %s after it opened", time.Since(t0).Round(100*time.Millisecond))
	for _, q := range []string{"st.rung.01", "st.rung.03"} {
		if !regexp.MustCompile(regexp.QuoteMeta(q) + `.*stuck`).MatchString(s) {
			t.Errorf("row %s is not marked stuck:\n%s", q, s)
		}
	}
	if regexp.MustCompile(`st\.rung\.0[02].*stuck`).MatchString(s) {
		t.Errorf("a healthy rung is marked stuck:\n%s", s)
	}
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)

	// rungs status has no history, but the age of the oldest message
	// (older than the ladder can hold one) gives both rungs away.
	flagged := func(out string) bool {
		return strings.Contains(out, "st.rung.01: stuck: oldest message is") && strings.Contains(out, "st.rung.03: stuck: oldest message is")
	}
	if err := (testutil.Poll{Within: 40 * time.Second, Every: time.Second}).Until(t, func() error {
		if out := mustRungs(t, env, "status", "--ladder", "st"); !flagged(out) {
			return errors.New(out)
		}
		return nil
	}); err != nil {
		t.Errorf("rungs status does not flag st.rung.01 and st.rung.03:\n%v", err)
	}
}

// raiseTTL redeclares one rung of the ladder st (1s, 4 levels) with another
// TTL, as an operator editing it by hand would, and binds it again. It
// returns the trace of delay, for publishing into the ladder.
func raiseTTL(t *testing.T, conn *broker.Conn, vhost, queue string, ttl, delay time.Duration) topology.Trace {
	t.Helper()
	l, err := topology.Ladder{Name: "st", Vhost: vhost, Unit: time.Second, Levels: 4, Radix: 2, QueueType: topology.Classic}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	found := false
	for i, q := range plan.Queues {
		if q.Name == queue {
			args := topology.Args{}
			for k, v := range q.Args {
				args[k] = v
			}
			args["x-message-ttl"] = ttl.Milliseconds()
			plan.Queues[i].Args, found = args, true
		}
	}
	if !found {
		t.Fatalf("no queue %s in the plan", queue)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Teardown(ctx, topology.Plan{Queues: []topology.Queue{{Name: queue}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(delay, "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// logTail is the last lines of the node's log that mention a queue, an
// exchange or dead-lettering, for a failure message.
func (n *node) logTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(n.dir, "log", strings.Split(n.name, "@")[0]+"@localhost.log"))
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "dead") || strings.Contains(l, "exchange") || strings.Contains(l, "queue") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep[max(0, len(keep)-lines):], "\n")
}
