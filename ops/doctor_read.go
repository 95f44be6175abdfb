package ops

import (
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// What doctor reads, beside how (ReadDoctor gathers DoctorFacts).

// DoctorScope is what doctor observes in one vhost: its ladders (with
// only, the ladder of that name) and every binding into their queues, a
// request per queue, so that a stray binding from an exchange no ladder
// owns is drift. Never the vhost's definitions: beside 10,000 other
// queues they are megabytes.
func DoctorScope(vhost, only string) Scope {
	s := Scope{Vhost: vhost, Inbound: true}
	if only != "" {
		s.Ladders = []string{only}
	}
	return s
}

// ReadsPolicies reports whether doctor reads a vhost's policies: only
// quorum queues have delayed retry, so only where a quorum ladder is.
func ReadsPolicies(rep health.Report) bool {
	for _, lr := range rep.Ladders {
		if lr.Found.Ladder.QueueType == topology.Quorum {
			return true
		}
	}
	return false
}

// KeySampled are the ladders whose rungs' routing keys doctor samples
// (SampleKeys): Celery's, whose keys its library builds, not rungs.
func KeySampled(found []topology.Found) []topology.Ladder {
	var out []topology.Ladder
	for _, f := range found {
		if f.Ladder.Layout == "celery" {
			out = append(out, f.Ladder)
		}
	}
	return out
}
