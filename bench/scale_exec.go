package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayCost is what `rungs replay` of N dead letters cost, and what a
// kill -9 in the middle of one did.
type ReplayCost struct {
	N int `json:"n"`
	// KilledAt is how many copies had reached the target when the first
	// replay was killed with SIGKILL; AfterKill* are the queues' depths
	// once the broker had returned its unacknowledged messages.
	KilledAt        int     `json:"killed_at"`
	AfterKillSource int     `json:"after_kill_source"`
	AfterKillTarget int     `json:"after_kill_target"`
	Moved           int     `json:"moved"`
	Seconds         float64 `json:"seconds"`
	PerS            float64 `json:"per_s"`
	Requests        int64   `json:"mgmt_requests"`
	Bytes           int64   `json:"mgmt_bytes"`
	// RSSQuarters is the largest resident memory sampled in each quarter
	// of the second (complete) replay; flat memory keeps them level.
	RSSQuarters [4]int64 `json:"rss_quarters_bytes"`
	MaxRSS      int64    `json:"max_rss_bytes"`
	// MaxHeap is the largest Go heap at the start of a collection, and GCs
	// the collections, from the runtime's gctrace.
	MaxHeap int64 `json:"max_heap_bytes"`
	GCs     int   `json:"gcs"`
	// Every dead letter must be at the target at least once after both
	// runs; duplicates are the copies the kill left on both sides.
	Delivered  int `json:"delivered"`
	Duplicates int `json:"duplicates"`
	Lost       int `json:"lost"`
}

// Queues of the replay part.
const (
	replayExpire = "bench.scale.expire" // TTL 0: dead-letters all it gets
	replayDLQ    = "bench.scale.dlq"
	replayTarget = "bench.scale.replayed"
)

// replay makes N real dead letters (messages expired from a queue with a
// dead-letter exchange, so they carry x-death), replays them with `rungs
// replay`, killed with SIGKILL a third of the way, then again to the end,
// and checks that each one reached the target.
func (s *scaleRun) replay(ctx context.Context) error {
	n := s.o.N
	rc := &ReplayCost{N: n}
	s.rep.Replay = rc
	plan := topology.Plan{Queues: []topology.Queue{
		{Name: replayExpire, Durable: true, Args: topology.Args{
			"x-message-ttl": int64(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": replayDLQ,
		}},
		typed(replayDLQ, s.l.QueueType), typed(replayTarget, s.l.QueueType),
	}}
	if _, err := s.pub.Apply(ctx, plan); err != nil {
		return err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		_ = s.pub.Teardown(tctx, plan)
	}()
	got, _, err := publishN(ctx, s.pub, n, func(i int) broker.Message {
		return broker.Message{RoutingKey: replayExpire, MessageID: strconv.Itoa(i), Body: s.body, Persistent: true, Headers: map[string]any{hdrSeq: int64(i)}}
	}, nil)
	if err != nil || got != n {
		return fmt.Errorf("dead letters: %d of %d confirmed: %v", got, n, err)
	}
	if err := s.waitDepth(ctx, replayDLQ, n); err != nil {
		return err
	}
	s.logf("%d dead letters in %s; replaying them, with a kill -9 a third of the way", n, replayDLQ)

	// Paced to take at least 4 s, so that the kill lands mid-run however
	// small N is; at a large N the pace is above what replay reaches.
	args := []string{"replay", "--from", replayDLQ, "--to-queue", replayTarget, "--yes"}
	killed, err := startMeasured(ctx, s.o.Binary, s.cfg, s.mgmt, append(args, "--rate", strconv.Itoa(max(1, n/4))+"/s")...)
	if err != nil {
		return err
	}
	for {
		if killed.exitedEarly() {
			s.problem("replay: the first run ended before the kill could land: %s", killed.stderrLine())
			break
		}
		d, err := s.depth(ctx, replayTarget)
		if err != nil {
			killed.kill()
			return err
		}
		if d >= max(1, n/3) {
			killed.kill()
			rc.KilledAt = d
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed.wait()
	rc.AfterKillSource, rc.AfterKillTarget = s.settle(ctx)
	if rc.AfterKillSource+rc.AfterKillTarget < n {
		s.problem("replay: after the kill -9, %d on the source and %d at the target: %d lost", rc.AfterKillSource, rc.AfterKillTarget, n-rc.AfterKillSource-rc.AfterKillTarget)
	}
	s.logf("kill -9 at %d copies: %d on the source, %d at the target", rc.KilledAt, rc.AfterKillSource, rc.AfterKillTarget)

	full, err := startMeasured(ctx, s.o.Binary, s.cfg, s.mgmt, append(args, "--json")...)
	if err != nil {
		return err
	}
	full.wait()
	if full.err != nil {
		s.problem("replay: %v: %s", full.err, full.stderrLine())
	}
	var res struct{ Moved int }
	_ = json.Unmarshal(full.stdout.Bytes(), &res)
	rc.Moved, rc.Seconds = res.Moved, full.took.Seconds()
	if rc.Seconds > 0 {
		rc.PerS = float64(res.Moved) / rc.Seconds
	}
	rc.Requests, rc.Bytes = full.proxy.cost()
	rc.RSSQuarters, rc.MaxRSS = full.quarters(), full.maxRSS()
	rc.MaxHeap, rc.GCs = full.heap()

	chk := newScaleCheck(n, time.Now())
	if err := s.drainQueue(ctx, replayTarget, chk); err != nil {
		return err
	}
	rc.Delivered, rc.Duplicates, rc.Lost = chk.n, chk.dups, n-chk.n
	if rc.Lost > 0 {
		s.problem("replay: %d of %d dead letters never reached %s", rc.Lost, n, replayTarget)
	}
	if left, err := s.depth(ctx, replayDLQ); err != nil || left != 0 {
		s.problem("replay: %d left on %s (%v)", left, replayDLQ, err)
	}
	s.logf("replayed %d in %.1fs (%s msg/s); RSS by quarter %s, max %s; Go heap max %s over %d GCs; %d at the target once, %d duplicates from the kill, %d lost",
		rc.Moved, rc.Seconds, formatRate(rc.PerS), quarterText(rc.RSSQuarters), formatBytes(rc.MaxRSS), formatBytes(rc.MaxHeap), rc.GCs, rc.Delivered, rc.Duplicates, rc.Lost)
	return nil
}

func typed(name string, qt topology.QueueType) topology.Queue {
	q := topology.Queue{Name: name, Durable: true}
	if qt == topology.Quorum {
		q.Args = topology.Args{"x-queue-type": "quorum"}
	}
	return q
}

func quarterText(q [4]int64) string {
	parts := make([]string, len(q))
	for i, v := range q {
		parts[i] = formatBytes(v)
	}
	return strings.Join(parts, " / ")
}

// waitDepth waits until queue holds want messages, or stops growing.
func (s *scaleRun) waitDepth(ctx context.Context, queue string, want int) error {
	last, since := -1, time.Now()
	for ctx.Err() == nil {
		d, err := s.depth(ctx, queue)
		if err != nil {
			return err
		}
		if d >= want {
			return nil
		}
		if d != last {
			last, since = d, time.Now()
		} else if time.Since(since) > 30*time.Second {
			return fmt.Errorf("%s holds %d of %d messages and stopped growing", queue, d, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ctx.Err()
}

// depth reads a queue's depth, trying again for a while: on a machine
// loaded enough, the broker drops a connection now and then (a missed
// heartbeat), which says nothing about the replay being measured.
func (s *scaleRun) depth(ctx context.Context, queue string) (int, error) {
	var err error
	for try := 0; try < 10 && ctx.Err() == nil; try++ {
		var d int
		if d, err = s.pub.Depth(ctx, queue); err == nil {
			return d, nil
		}
		time.Sleep(time.Second)
	}
	return 0, err
}

// settle waits until the source and the target have stopped changing (the
// broker returns a killed consumer's messages in a moment) and returns
// their depths.
func (s *scaleRun) settle(ctx context.Context) (source, target int) {
	stable := 0
	for stable < 5 && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		a, err1 := s.depth(ctx, replayDLQ)
		b, err2 := s.depth(ctx, replayTarget)
		if err1 != nil || err2 != nil {
			continue
		}
		if a == source && b == target {
			stable++
		} else {
			source, target, stable = a, b, 0
		}
	}
	return source, target
}

// drainQueue consumes every message of queue into chk, until it is empty
// and nothing more arrives for a few seconds.
func (s *scaleRun) drainQueue(ctx context.Context, queue string, chk *scaleCheck) error {
	sub, err := broker.Dial(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer sub.Close()
	in, err := sub.Consume(context.WithoutCancel(ctx), queue, 2000)
	if err != nil {
		return err
	}
	total := 0
	quiet := time.NewTimer(5 * time.Second)
	defer quiet.Stop()
	for {
		select {
		case d, ok := <-in:
			if !ok {
				return fmt.Errorf("consume %s: the channel closed", queue)
			}
			total++
			_ = d.Ack()
			seq, ok := intHeader(d.Headers, hdrSeq)
			switch {
			case !ok || seq < 0 || seq >= int64(len(chk.seen)):
				chk.bad++
			case chk.seen[seq]:
				chk.dups++
			default:
				chk.seen[seq] = true
				chk.n++
			}
			quiet.Reset(5 * time.Second)
		case <-quiet.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// measured is a rungs subprocess whose management requests go through a
// counting proxy and whose memory is sampled.
type measured struct {
	cmd   *exec.Cmd
	proxy *countingProxy
	// Read only once the process has exited.
	stdout, stderr bytes.Buffer
	start          time.Time
	took           time.Duration
	err            error
	exited         chan struct{}
	once           sync.Once

	mu  sync.Mutex
	rss []rssSample
	// hwm is the largest VmHWM sampled: the peak resident set since the
	// exec. (getrusage's ru_maxrss is no use here: Linux carries the
	// forking parent's peak over into the child's.)
	hwm int64
}

type rssSample struct {
	at  time.Duration
	rss int64
}

// startMeasured starts binary with args against cfg's broker (vhost
// included), its management API behind a counting proxy, and the Go
// runtime tracing its collections on stderr.
func startMeasured(ctx context.Context, binary string, cfg broker.Config, m *broker.Management, args ...string) (*measured, error) {
	p, err := newCountingProxy(m.URL())
	if err != nil {
		return nil, err
	}
	mgmtURL := p.url
	if u, err := url.Parse(cfg.MgmtURL); err == nil && u.User != nil {
		pu, _ := url.Parse(p.url)
		pu.User = u.User
		mgmtURL = pu.String()
	}
	amqpURL := cfg.URL
	if amqpURL == "" {
		amqpURL = broker.DefaultURL
	}
	for _, f := range []struct{ flag, v string }{{"--ca-cert", cfg.CACert}, {"--cert", cfg.ClientCert}, {"--key", cfg.ClientKey}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	x := &measured{proxy: p, exited: make(chan struct{})}
	x.cmd = exec.CommandContext(ctx, binary, args...)
	// Credentials travel in the environment, never on a command line that
	// ps shows; the environment wins over a config file's context. The
	// benchmark itself refused a read-only context, so the child may write.
	args = append(args, "--read-only=false")
	env := []string{"RUNGS_URL=" + amqpURL, "RUNGS_MGMT_URL=" + mgmtURL, "RUNGS_VHOST=" + cfg.Vhost, "GODEBUG=gctrace=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "RUNGS_URL" && k != "RUNGS_MGMT_URL" && k != "RUNGS_VHOST" && k != "GODEBUG" {
			env = append(env, kv)
		}
	}
	x.cmd.Env = env
	x.cmd.Stdout, x.cmd.Stderr = &x.stdout, &x.stderr
	x.start = time.Now()
	if err := x.cmd.Start(); err != nil {
		p.close()
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go x.sample()
	go func() {
		x.err = x.cmd.Wait()
		x.took = time.Since(x.start)
		p.close()
		close(x.exited)
	}()
	return x, nil
}

// runMeasured runs a rungs command to its end and reports its cost.
func runMeasured(ctx context.Context, binary string, cfg broker.Config, m *broker.Management, args ...string) CommandCost {
	x, err := startMeasured(ctx, binary, cfg, m, args...)
	if err != nil {
		return CommandCost{Err: err.Error()}
	}
	x.wait()
	c := CommandCost{MS: msf(x.took), RSS: x.maxRSS()}
	c.Requests, c.Bytes = x.proxy.cost()
	if x.err != nil {
		c.Err = fmt.Sprintf("%v: %s", x.err, x.stderrLine())
	}
	return c
}

func (x *measured) wait() { <-x.exited }

func (x *measured) exitedEarly() bool {
	select {
	case <-x.exited:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL (os.Process.Kill is kill -9 on Unix).
func (x *measured) kill() { _ = x.cmd.Process.Kill() }

// sample reads the process's resident memory every 50 ms.
func (x *measured) sample() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-x.exited:
			return
		case <-t.C:
			if rss, hwm := procRSS(x.cmd.Process.Pid); rss > 0 {
				x.mu.Lock()
				x.rss = append(x.rss, rssSample{time.Since(x.start), rss})
				x.hwm = max(x.hwm, hwm)
				x.mu.Unlock()
			}
		}
	}
}

func (x *measured) maxRSS() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.hwm
	for _, s := range x.rss {
		m = max(m, s.rss)
	}
	return m
}

// quarters is the largest sample in each quarter of the run.
func (x *measured) quarters() [4]int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	var q [4]int64
	if x.took <= 0 {
		return q
	}
	for _, s := range x.rss {
		i := min(3, int(4*s.at/x.took))
		q[i] = max(q[i], s.rss)
	}
	return q
}

var gcLine = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// heap reads the gctrace lines: the largest heap at a collection's start,
// and the number of collections.
func (x *measured) heap() (int64, int) {
	var most int64
	n := 0
	sc := bufio.NewScanner(strings.NewReader(x.stderr.String()))
	for sc.Scan() {
		m := gcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		v, _ := strconv.ParseInt(m[1], 10, 64)
		most = max(most, v<<20)
	}
	return most, n
}

// stderrLine is the child's last stderr line that is not a gctrace line.
func (x *measured) stderrLine() string {
	last := ""
	for _, l := range strings.Split(x.stderr.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "gc ") {
			last = l
		}
	}
	return last
}

// procRSS is a process's resident set and its peak so far, in bytes,
// from /proc (0 elsewhere).
func procRSS(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	kb := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n << 10
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			rss = kb(v)
		} else if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			hwm = kb(v)
		}
	}
	return rss, hwm
}

// countingProxy forwards to the management API and counts the requests
// and response body bytes that pass, what a command costs the broker.
type countingProxy struct {
	url      string
	srv      *http.Server
	requests atomic.Int64
	bytes    atomic.Int64
}

func newCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("management URL: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		r.Body = &countedBody{ReadCloser: r.Body, n: &p.bytes}
		return nil
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		rp.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) cost() (int64, int64) { return p.requests.Load(), p.bytes.Load() }

func (p *countingProxy) close() { _ = p.srv.Close() }

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
