package bench

import (
	"context"
	"net/url"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// brokerCPU reads the CPU time a local broker's process has used. On a
// shared machine throughput is noisy, but the broker's own CPU time per
// message is not disturbed by other programs' load, so the run reports
// both.
type brokerCPU struct {
	pid int
}

// findBrokerCPU is the broker's process: pid when the caller names one
// (--broker-pid; -1 for none), else the os_pid the management API reports
// for node (the one that answered the overview), when the AMQP URL is on
// this machine. rungs reads no /proc: the CPU time comes from the
// process's CPU clock (cpu_linux.go), and ok is false where there is none
// or it does not answer.
func findBrokerCPU(ctx context.Context, mgmt *broker.Management, node, amqpURL string, pid int) (brokerCPU, bool) {
	if pid < 0 {
		return brokerCPU{}, false
	}
	if pid == 0 {
		pid = localNodePID(ctx, mgmt, node, amqpURL)
	}
	c := brokerCPU{pid: pid}
	if _, ok := c.used(); !ok {
		return brokerCPU{}, false
	}
	return c, true
}

// localNodePID is node's os_pid when amqpURL (empty: the default URL) is
// a loopback address (a remote broker's pid means nothing here), else 0.
func localNodePID(ctx context.Context, mgmt *broker.Management, node, amqpURL string) int {
	if amqpURL == "" {
		amqpURL = broker.DefaultURL
	}
	u, err := url.Parse(amqpURL)
	if err != nil || mgmt == nil {
		return 0
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
	default:
		return 0
	}
	ns, err := mgmt.Nodes(ctx)
	if err != nil {
		return 0
	}
	for _, n := range ns {
		if n.Name == node {
			return n.OSPid
		}
	}
	return 0
}

// used is the process's CPU time so far.
func (c brokerCPU) used() (time.Duration, bool) {
	if c.pid <= 0 {
		return 0, false
	}
	return processCPU(c.pid)
}
