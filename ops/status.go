package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// StatusRequest is rungs status: every ladder of Vhost, or with Ladder
// the ladder of that name alone.
type StatusRequest struct {
	Vhost, Ladder string
}

// Scope is what status observes: the vhost's ladders, or the one named.
func (r StatusRequest) Scope() Scope {
	s := Scope{Vhost: r.Vhost}
	if r.Ladder != "" {
		s.Ladders = []string{r.Ladder}
	}
	return s
}

// CheckFound refuses a named ladder the observer did not find, before any
// stall watch waits on it.
func (r StatusRequest) CheckFound(found []topology.Found) error {
	if r.Ladder != "" && len(found) == 0 {
		return fmt.Errorf("no ladder %q in vhost %s (rungs discover lists the ladders there)", r.Ladder, r.Vhost)
	}
	return nil
}

// Beside reports whether status reads what is beside the ladders too:
// delayed retry across the vhost's quorum queues and its bridges. Status
// of a named ladder reads only its objects (its rungs show their own
// delayed messages), never a listing the broker evaluates over every
// queue.
func (r StatusRequest) Beside() bool { return r.Ladder == "" }
