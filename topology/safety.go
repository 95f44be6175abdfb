package topology

import "fmt"

// LayoutRisk is what a ladder's layout risks on a RabbitMQ release: the
// one verdict apply, plan, doctor and bench follow (Ladder.RiskOn).
type LayoutRisk int

const (
	// LayoutSafe: the release routes the ladder as its plan says.
	LayoutSafe LayoutRisk = iota
	// LayoutLosesOnRetry: a quorum ladder routed by BCC keys on a release
	// whose dead-letter retries drop them (Version.LosesBCCOnDeadLetterRetry).
	// It runs as well as any until a retry happens (a node restart, a
	// slow next rung), then those messages end in its unroutable queue.
	LayoutLosesOnRetry
	// LayoutBroken: a ladder routed by BCC keys on a release that drops
	// them at every dead-lettering (Version.LosesBCCOnDeadLetter): every
	// message ends in the unroutable queue after its first rung.
	LayoutBroken
)

// RiskOn judges the ladder's layout on release v. An unknown version is
// safe: a caller that could not read it says so itself.
func (l Ladder) RiskOn(v Version) LayoutRisk {
	switch {
	case !l.RoutesByBCC():
		return LayoutSafe
	case v.LosesBCCOnDeadLetter():
		return LayoutBroken
	case l.QueueType == Quorum && v.LosesBCCOnDeadLetterRetry():
		return LayoutLosesOnRetry
	}
	return LayoutSafe
}

// BCCBrokenWhy is the one explanation of LayoutBroken, for a broker that
// says it runs release.
func BCCBrokenWhy(release string) string {
	return fmt.Sprintf("RabbitMQ %s drops BCC routing keys when it dead-letters a message (3.13.0 to 3.13.2; fixed in 3.13.3), so a direct ladder would leave every delayed message in its unroutable queue after the first rung", release)
}

// BCCRetryWhy is the one explanation of LayoutLosesOnRetry for ladder.
func BCCRetryWhy(v Version, ladder string) string {
	return fmt.Sprintf("quorum rungs on RabbitMQ %s (before 3.13) drop BCC keys when they retry a dead-lettering, which leaves those messages in %s.unroutable", v, ladder)
}
