package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// RunInfo is what every bench report says of its run first: when it
// started, how long it took, and the machine and broker it measured.
type RunInfo struct {
	Started time.Time  `json:"started"`
	Seconds float64    `json:"seconds"`
	Machine Machine    `json:"machine"`
	Broker  BrokerInfo `json:"broker"`
}

// StartRun notes the start and the machine, its load included.
func StartRun() RunInfo { return RunInfo{Started: time.Now().UTC(), Machine: ReadMachine()} }

// MeetBroker reads the broker's overview into Broker.
func (r *RunInfo) MeetBroker(ctx context.Context, mgmt *broker.Management) (broker.Overview, error) {
	ov, err := mgmt.Overview(ctx)
	if err != nil {
		return ov, fmt.Errorf("broker overview: %w", err)
	}
	r.Broker = BrokerInfo{RabbitMQ: ov.RabbitMQVersion, Erlang: ov.ErlangVersion, Node: ov.Node}
	return ov, nil
}

// Finish notes how long the run took since began, and the load after it.
func (r *RunInfo) Finish(began time.Time) {
	r.Seconds = time.Since(began).Seconds()
	r.Machine.LoadAfter = ReadLoad()
}

// Machine describes where a run happened, so that numbers from different
// machines are never compared unknowingly.
type Machine struct {
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	Memory     string `json:"memory"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// ReadMachine reads the CPU model and memory from /proc where there is one.
func ReadMachine() Machine {
	m := Machine{
		CPU: "unknown CPU", CPUs: runtime.NumCPU(), Memory: "unknown memory",
		Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: ReadLoad(),
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return m
}

// ReadLoad is the 1-, 5- and 15-minute load averages, or "?".
func ReadLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// procField returns the first "key : value" line's value of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
