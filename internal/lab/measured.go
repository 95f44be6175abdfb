package lab

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
)

// measured is a rungs subprocess, started by a spawner (spawn.go), whose
// management requests go through a counting proxy, whose memory is
// sampled while it runs and whose peak the kernel reports when it ends.
type measured struct {
	cmd   *exec.Cmd // the spawner
	pid   int       // the rungs process
	proxy *countingProxy
	// end is the spawner's report: the child's peak and wall time.
	end spawnReport
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
	// exec, while it ran (a command quicker than the first sample has
	// none; end.maxRSS has its peak).
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
	self, err := os.Executable()
	if err != nil {
		p.close()
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		p.close()
		return nil, err
	}
	x := &measured{proxy: p, exited: make(chan struct{})}
	x.cmd = rungsCommand(ctx, self, cfg, mgmtURL, []string{"GODEBUG=gctrace=1", spawnEnv + "=1"}, append([]string{binary}, args...)...)
	x.cmd.Stdout, x.cmd.Stderr = &x.stdout, &x.stderr
	x.cmd.ExtraFiles = []*os.File{pw}
	err = x.cmd.Start()
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		p.close()
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	report := bufio.NewReader(pr)
	if x.pid, err = readPID(report); err != nil {
		_ = x.cmd.Wait()
		_ = pr.Close()
		p.close()
		return nil, fmt.Errorf("start %s: %v: %s", binary, err, x.stderrLine())
	}
	x.start = time.Now()
	go x.sample()
	go func() {
		x.end = readEnd(report)
		_ = pr.Close()
		x.err = x.cmd.Wait()
		x.took = time.Since(x.start)
		if x.end.hasEnd {
			x.took = x.end.took
		}
		p.close()
		close(x.exited)
	}()
	return x, nil
}

// rungsCommand is binary with args against cfg's broker and vhost, its
// management API at mgmtURL (cfg's when ""), with env added to the
// environment.
func rungsCommand(ctx context.Context, binary string, cfg broker.Config, mgmtURL string, env []string, args ...string) *exec.Cmd {
	amqpURL := cfg.URL
	if amqpURL == "" {
		amqpURL = broker.DefaultURL
	}
	if mgmtURL == "" {
		mgmtURL = cfg.MgmtURL
	}
	for _, f := range []struct{ flag, v string }{{"--ca-cert", cfg.CACert}, {"--cert", cfg.ClientCert}, {"--key", cfg.ClientKey}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	// The lab writes to the vhosts it makes, so the child may too,
	// whatever a config file's context says.
	args = append(args, "--read-only=false")
	cmd := exec.CommandContext(ctx, binary, args...)
	// Credentials travel in the environment, never on a command line that
	// ps shows; the environment wins over a config file's context.
	set := map[string]bool{"RUNGS_URL": true, "RUNGS_MGMT_URL": true, "RUNGS_VHOST": true}
	env = append(env, "RUNGS_URL="+amqpURL, "RUNGS_VHOST="+cfg.Vhost)
	if mgmtURL != "" {
		env = append(env, "RUNGS_MGMT_URL="+mgmtURL)
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// runMeasured runs a rungs command to its end and reports its cost.
func runMeasured(ctx context.Context, binary string, cfg broker.Config, m *broker.Management, args ...string) CommandCost {
	x, err := startMeasured(ctx, binary, cfg, m, args...)
	if err != nil {
		return CommandCost{Err: err.Error()}
	}
	x.wait()
	c := CommandCost{MS: bench.Millis(x.took), RSS: x.maxRSS()}
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

// kill sends SIGKILL to the rungs process; the spawner then dies of it
// too.
func (x *measured) kill() {
	if p, err := os.FindProcess(x.pid); err == nil {
		_ = p.Kill()
	}
}

// sample reads the process's resident memory every 50 ms.
func (x *measured) sample() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-x.exited:
			return
		case <-t.C:
			if rss, hwm := procRSS(x.pid); rss > 0 {
				x.mu.Lock()
				x.rss = append(x.rss, rssSample{time.Since(x.start), rss})
				x.hwm = max(x.hwm, hwm)
				x.mu.Unlock()
			}
		}
	}
}

// maxRSS is the child's peak resident set: the kernel's figure when it is
// above the spawner's own peak (which exec folds into it, so that a lower
// figure may be the spawner's), or else the largest sampled.
func (x *measured) maxRSS() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.hwm
	if x.end.maxRSS > x.end.hwm {
		m = max(m, x.end.maxRSS)
	}
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
