package lab

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// spawnEnv marks a lab process re-executed as the spawner of one measured
// rungs command.
//
// Why a spawner: the kernel reports a child's peak resident set (rusage
// ru_maxrss) after it exits, so the figure cannot be missed the way a
// /proc sample of a 50 ms command can. But Go starts a child with
// CLONE_VM, and exec folds the forking process's own peak into the
// child's: a child of the lab reports at least the lab's peak. A child of
// a small, fresh spawner reports at least the spawner's, which the
// spawner reads and hands over, so the lab can tell a child's own peak
// from the spawner's floor.
const spawnEnv = "RUNGS_LAB_SPAWN"

// Spawn runs the measured command when this process was started as its
// spawner, and never returns then; otherwise it returns at once. The
// lab's test binary (TestMain) and cmd/rungs-lab call it first.
func Spawn() {
	if os.Getenv(spawnEnv) == "" {
		return
	}
	os.Exit(spawn(os.Args[1:]))
}

// spawn runs args[0] with args[1:], passing stdio and the environment (but
// spawnEnv) through, and writes to fd 3: "pid N" once it has started,
// then "rusage MAXRSS HWM NS": the child's ru_maxrss, the spawner's own
// peak and the child's wall time (both in bytes, ns). Its exit status is
// the child's; a child killed by a signal kills the spawner with it.
func spawn(args []string) int {
	report := os.NewFile(3, "report")
	if len(args) == 0 || report == nil {
		fmt.Fprintln(os.Stderr, "spawn: no command or no report pipe")
		return 127
	}
	closeOnExec(report) // the report is the spawner's, not the child's
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, spawnEnv+"=") {
			c.Env = append(c.Env, kv)
		}
	}
	c.SysProcAttr = childAttr()
	start := time.Now()
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		return 127
	}
	fmt.Fprintf(report, "pid %d\n", c.Process.Pid)
	_ = c.Wait()
	took := time.Since(start)
	_, hwm := procRSS(os.Getpid())
	fmt.Fprintf(report, "rusage %d %d %d\n", peakRSS(c.ProcessState), hwm, took.Nanoseconds())
	_ = report.Close()
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signalExit(ws.Signal())
	}
	return c.ProcessState.ExitCode()
}

// signalExit dies of sig, so that the lab sees the child's end as the
// child met it ("signal: killed").
func signalExit(sig syscall.Signal) {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(sig)
	}
	time.Sleep(time.Second) // a caught signal (not SIGKILL) falls through
	os.Exit(128 + int(sig))
}

// spawnReport is what the spawner wrote after the child's end: its peak
// and wall time.
type spawnReport struct {
	maxRSS, hwm int64
	took        time.Duration
	hasEnd      bool
}

// readPID reads the "pid" line; an EOF first means the spawner could not
// start the child.
func readPID(r *bufio.Reader) (int, error) {
	l, err := r.ReadString('\n')
	if v, ok := strings.CutPrefix(strings.TrimSpace(l), "pid "); ok {
		return strconv.Atoi(v)
	}
	if err == nil {
		err = fmt.Errorf("spawner wrote %q", l)
	}
	return 0, err
}

// readEnd reads the "rusage" line (none when the spawner itself was killed).
func readEnd(r *bufio.Reader) (rep spawnReport) {
	l, _ := r.ReadString('\n')
	f := strings.Fields(l)
	if len(f) != 4 || f[0] != "rusage" {
		return rep
	}
	rep.maxRSS, _ = strconv.ParseInt(f[1], 10, 64)
	rep.hwm, _ = strconv.ParseInt(f[2], 10, 64)
	ns, _ := strconv.ParseInt(f[3], 10, 64)
	rep.took, rep.hasEnd = time.Duration(ns), true
	return rep
}
