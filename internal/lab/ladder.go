package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// DefaultLadder is the ladder `rungs apply --ladder name` would declare on
// cfg's broker with planArgs (ladder flags such as --queue-type), as the
// rungs binary itself works it out: `rungs plan --json` of a ladder of a
// name no ladder has, so that none is discovered. The lab measures the
// ladder users get and never decides it a second time.
func DefaultLadder(ctx context.Context, binary string, cfg broker.Config, name string, planArgs ...string) (topology.Ladder, error) {
	args := append([]string{"plan", "--ladder", vhostName("plan"), "--json"}, planArgs...)
	cmd := rungsCommand(ctx, binary, cfg, "", nil, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// plan exits 3 when the broker lacks the ladder, as it does here.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
		return topology.Ladder{}, fmt.Errorf("rungs plan: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var plan struct {
		Ladder struct {
			Name      string  `json:"name"`
			Layout    string  `json:"layout"`
			UnitMS    float64 `json:"unit_ms"`
			Levels    int     `json:"levels"`
			Radix     int     `json:"radix"`
			QueueType string  `json:"queue_type"`
		} `json:"ladder"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &plan); err != nil {
		return topology.Ladder{}, fmt.Errorf("rungs plan --json: %w", err)
	}
	p := plan.Ladder
	l, err := topology.Ladder{
		Name: name, Layout: p.Layout, Unit: time.Duration(p.UnitMS * float64(time.Millisecond)),
		Levels: p.Levels, Radix: p.Radix, QueueType: topology.QueueType(p.QueueType),
	}.Normalize()
	if err != nil {
		return l, fmt.Errorf("the ladder rungs plan printed: %w", err)
	}
	if l.Levels != p.Levels || l.Radix != p.Radix {
		return l, fmt.Errorf("the ladder rungs plan printed has %d levels of radix %d, read back as %d of %d", p.Levels, p.Radix, l.Levels, l.Radix)
	}
	return l, nil
}
