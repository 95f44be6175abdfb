package ops

import "github.com/rungs-dev/rungs/topology"

// checkAtMostOnce names a ladder applied with --dead-letter-strategy
// at-most-once and what it risks. It is a warning, not a problem: the
// operator chose the trade, and doctor keeps it in view for whoever reads
// the report later (a node to stop, a disk alarm to clear).
func checkAtMostOnce(lr DoctorLadder, out *Findings) {
	l := lr.Found.Ladder
	if !l.AtMostOnce {
		return
	}
	out.Add(LadderArea(l), FindingWarn, "dead-letters at most once %s (applied so, for a faster drain): %s. For none lost, apply a ladder under another name without the flag (at least once) and move the messages there with rungs migrate",
		AtMostOnceRungs(l), topology.AtMostOnceRisk)
}
