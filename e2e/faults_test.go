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
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// TestMain removes the binary rungsBinary builds once for every test.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// rungsBinary builds rungs once per test binary.
func rungsBinary(t *testing.T) string {
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
}

// startNode starts a node named rungs-ROLE-PID@localhost and stops it (and
// removes its state) when the test ends. extra, if not nil, adds broker.sh
// parameters (e.g. RUNGS_TLS_CERT_DIR) given extraPorts more free ports.
func startNode(t *testing.T, role string, extraPorts int, extra func(ports []int) []string) *node {
	t.Helper()
	dir, err := os.MkdirTemp("", "rungs-"+role+"-")
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3+extraPorts)
	n := &node{
		t: t, dir: dir, name: fmt.Sprintf("rungs-%s-%d@localhost", role, os.Getpid()),
		amqp: ports[0], mgmt: ports[1], dist: ports[2], extraPorts: ports[3:],
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

// freePorts returns n loopback ports nothing listens on right now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

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
		var err error
		for i := 0; i < 50; i++ {
			var ln net.Listener
			if ln, err = net.Listen("tcp", p.addr); err == nil {
				p.ln = ln
				go p.serve(ln)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
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
				if time.Since(last) > quiet {
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

// TestFaultBrokerRestart restarts a node of its own under a long publish
// into a durable ladder and an open console. The console must show the
// outage with a reconnect countdown and come back by itself; the publish
// must finish or stop with a clear error and an exact confirmed count; and
// every confirmed message must arrive, none early.
func TestFaultBrokerRestart(t *testing.T) {
	n := startNode(t, "fault", 0, nil)
	env := n.rungsEnv()
	const (
		ladder = "fault"
		count  = 100000
		delay  = 13100 * time.Millisecond // rungs of 12.8s, 200ms and 100ms
		prefix = "r-"
	)
	mustRungs(t, env, "apply", "--ladder", ladder, "--unit", "100ms", "--levels", "10")

	m := newTerm(t, 160, 40, env, rungsBinary(t)+" --ladder "+ladder+" --refresh 1s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › "+ladder), 30*time.Second)
	m.waitFor("a live connection", text("● connected"), 10*time.Second)

	// A publish long enough for the broker to go down in the middle of it.
	pub := exec.Command(rungsBinary(t), "publish", "--ladder", ladder, "--delay", "13.1s",
		"--count", strconv.Itoa(count), "--id-prefix", prefix, "--json")
	pub.Env = append(os.Environ(), env...)
	var pubOut, pubErr bytes.Buffer
	pub.Stdout, pub.Stderr = &pubOut, &pubErr
	t0 := time.Now()
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var pubTook time.Duration
	go func() {
		err := pub.Wait()
		pubTook = time.Since(t0)
		exited <- err
	}()
	t.Cleanup(func() {
		if pub.ProcessState == nil {
			_ = pub.Process.Kill()
		}
	})
	time.Sleep(time.Second)

	stopAt := time.Now()
	n.must("down")
	downAt := time.Now()
	// The publish either stopped when the connection dropped (messages
	// awaiting a confirm have an unknown outcome) or waits for the broker.
	var exitErr error
	ended := false
	select {
	case exitErr = <-exited:
		ended = true
		if exitErr == nil {
			t.Fatalf("the publish finished before the broker went down; raise the count\n%s", pubOut.String())
		}
	default:
	}
	// The outage, with a countdown to the next attempt.
	s := m.waitFor("the reconnect countdown", regexp.MustCompile(`reconnecting (in \d+s|now)`), 30*time.Second)
	countdowns := map[string]bool{regexp.MustCompile(`reconnecting (in \d+s|now)( \(attempt \d+\))?`).FindString(s): true}
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end) && len(countdowns) < 2; time.Sleep(200 * time.Millisecond) {
		if c := regexp.MustCompile(`reconnecting (in \d+s|now)( \(attempt \d+\))?`).FindString(m.screen()); c != "" {
			countdowns[c] = true
		}
	}
	if len(countdowns) < 2 {
		t.Errorf("the countdown did not move in 6s: %v", countdowns)
	}
	m.waitFor("the stale-data marker", text("stale since"), 15*time.Second)

	n.must("up")
	upAt := time.Now()
	m.waitFor("the console connected again", text("● connected"), 30*time.Second)
	m.waitGone("the stale-data marker", text("stale since"), 30*time.Second)
	reconnect := time.Since(upAt)

	if !ended {
		select {
		case exitErr = <-exited:
		case <-time.After(2 * time.Minute):
			t.Fatalf("the publish did not end within 2m of the broker coming back\n%s", pubErr.String())
		}
	}
	var rep publishReport
	if err := json.Unmarshal(pubOut.Bytes(), &rep); err != nil {
		t.Fatalf("publish --json: %v\nstdout: %s\nstderr: %s", err, pubOut.String(), pubErr.String())
	}
	if rep.Requested != count || rep.Confirmed+rep.Returned+rep.Nacked+rep.Failed > count {
		t.Fatalf("inconsistent counts: %+v", rep)
	}
	stderr := strings.TrimRight(pubErr.String(), "\n")
	if exitErr != nil {
		want := fmt.Sprintf("publish stopped after %d of %d messages were confirmed", rep.Confirmed, count)
		if strings.Contains(stderr, "\n") || !strings.HasPrefix(stderr, "rungs: ") || !strings.Contains(stderr, want) {
			t.Errorf("publish failed without one clear line naming %q:\n%s", want, stderr)
		}
	} else if rep.Confirmed != count {
		t.Errorf("publish exited 0 with %d of %d confirmed", rep.Confirmed, count)
	}

	// Every confirmed message arrives, none early; duplicates are allowed
	// and counted. Messages of unknown outcome (failed) may or may not.
	got := newArrivals()
	consumeUntil(t, n.config(), ladder+".done", 3*time.Minute, 20*time.Second,
		func(d broker.Delivery) { got.record(d, prefix, count, t0) },
		func() bool { return len(got.seen) >= rep.Confirmed+rep.Failed })
	t.Logf("publish: %+v in %s (exit %v)", rep, pubTook.Round(time.Millisecond), exitErr)
	t.Logf("broker stopped in %s (down at +%s), back up %s later; console reconnected %s after the broker answered",
		downAt.Sub(stopAt).Round(time.Millisecond), downAt.Sub(t0).Round(time.Millisecond),
		upAt.Sub(downAt).Round(time.Millisecond), reconnect.Round(time.Millisecond))
	t.Logf("arrived: %d deliveries, %d distinct, %d duplicates, %d early, %d foreign; countdowns seen %v",
		got.total, len(got.seen), got.duplicates(), len(got.early), len(got.foreign), countdowns)
	if len(got.seen) < rep.Confirmed {
		t.Errorf("lost: %d distinct messages arrived, %d were confirmed", len(got.seen), rep.Confirmed)
	}
	if len(got.seen) > rep.Confirmed+rep.Failed {
		t.Errorf("unexpected: %d distinct messages arrived, at most %d (confirmed + unknown) could", len(got.seen), rep.Confirmed+rep.Failed)
	}
	if len(got.early) > 0 {
		t.Errorf("%d messages arrived early, e.g. %v", len(got.early), got.early[:min(5, len(got.early))])
	}
	if len(got.foreign) > 0 {
		t.Errorf("%d messages nobody published, e.g. %v", len(got.foreign), got.foreign[:min(5, len(got.foreign))])
	}
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)
}

// TestFaultManagementDown keeps AMQP up while the management API first
// hangs, then refuses connections: the console keeps the last data, marks
// it stale with the reason, keeps answering keys, and recovers by itself.
func TestFaultManagementDown(t *testing.T) {
	cfg := brokertest.NewVhost(t)
	p := newProxy(t, hostPort(t, cfg.MgmtURL))
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=http://" + p.addr, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, env, "apply", "--ladder", "mg", "--levels", "6")

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
	cfg := brokertest.NewVhost(t)
	p := newProxy(t, hostPort(t, cfg.URL))
	direct := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	env := []string{"RUNGS_URL=amqp://guest:guest@" + p.addr + "/", "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, direct, "apply", "--ladder", "am", "--levels", "8")

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
	cfg := brokertest.NewVhost(t)
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	mustRungs(t, env, "apply", "--ladder", "st", "--unit", "1s", "--levels", "4")

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
	msg := broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, Persistent: true, Timestamp: time.Now()}
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
	var out string
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(time.Second) {
		if out = mustRungs(t, env, "status", "--ladder", "st"); flagged(out) || time.Now().After(deadline) {
			break
		}
	}
	if !flagged(out) {
		t.Errorf("rungs status does not flag st.rung.01 and st.rung.03:\n%s", out)
	}
}

// raiseTTL redeclares one rung of the ladder st (1s, 4 levels) with another
// TTL, as an operator editing it by hand would, and binds it again. It
// returns the trace of delay, for publishing into the ladder.
func raiseTTL(t *testing.T, conn *broker.Conn, vhost, queue string, ttl, delay time.Duration) topology.Trace {
	t.Helper()
	l, err := topology.Ladder{Name: "st", Vhost: vhost, Unit: time.Second, Levels: 4}.Normalize()
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
