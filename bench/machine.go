package bench

import (
	"context"
	"fmt"
	"runtime"
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

// ReadMachine describes this machine: CPUs, memory and load from the
// kernel (machine_linux.go). rungs reads no /proc, so the CPU's model is
// not known here; the lab, which may, fills it in.
func ReadMachine() Machine {
	m := Machine{
		CPU: "unknown CPU", CPUs: runtime.NumCPU(), Memory: "unknown memory",
		Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: ReadLoad(),
	}
	if b := totalMemory(); b > 0 {
		m.Memory = fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return m
}

// ReadLoad is the 1-, 5- and 15-minute load averages, or "?".
func ReadLoad() string {
	l, ok := loadAverages()
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
}
