package bridge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Line is one status line of a running bridge, as rungs bridge prints it
// every --status-every and when it stops: the parked reasons sorted, so
// two lines of the same progress read the same.
func (p Progress) Line() string {
	s := fmt.Sprintf("taken %d: %d scheduled, %d delivered now, %d parked; %d left the ladder (latest %s late, most %s); intake lag %s; %d redelivered, %d unconfirmed",
		p.Received, p.Scheduled, p.Now, p.ParkedTotal(), p.Exited, topology.FormatDelay(p.ExitLate.Round(time.Millisecond)),
		topology.FormatDelay(p.ExitLateMax.Round(time.Millisecond)), topology.FormatDelay(p.IntakeLag), p.Redelivered, p.Unconfirmed)
	if len(p.Parked) > 0 {
		reasons := make([]string, 0, len(p.Parked))
		for r, n := range p.Parked {
			reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(reasons)
		s += " (parked: " + strings.Join(reasons, "; ") + ")"
	}
	if p.NoReceipt > 0 {
		s += fmt.Sprintf("; %d without %s, counted from when taken", p.NoReceipt, topology.HeaderReceivedMS)
	}
	return s
}
