package cli

import (
	"context"
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// bccBrokenText is the one explanation doctor and apply give for a broker
// that loses BCC keys on dead-lettering (topology.Version.LosesBCCOnDeadLetter).
func bccBrokenText(version string) string {
	return fmt.Sprintf("RabbitMQ %s drops BCC routing keys when it dead-letters a message (3.13.0 to 3.13.2; fixed in 3.13.3), so a direct ladder would leave every delayed message in its unroutable queue after the first rung", version)
}

// bccRetryText is the one explanation apply, plan and doctor give for a
// quorum ladder routed by BCC on a broker whose dead-lettering retries
// lose the keys (topology.Version.LosesBCCOnDeadLetterRetry).
func bccRetryText(v topology.Version, ladder string) string {
	return fmt.Sprintf("quorum rungs on RabbitMQ %s (before 3.13) drop BCC keys when they retry a dead-lettering, which leaves those messages in %s.unroutable", v, ladder)
}

// refuseBrokenBCC stops apply from declaring a direct ladder on a broker
// that cannot route it. When the version cannot be read, apply goes ahead
// with the returned warning: refusing every broker without a management
// API would make the layout unusable there. The caller prints it once the
// broker answers, so that a broker nobody reaches gets one error line.
func (e *env) refuseBrokenBCC(ctx context.Context, l topology.Ladder) (warning string, err error) {
	if !l.RoutesByBCC() {
		return "", nil
	}
	v, err := e.brokerVersion(ctx)
	if err == nil {
		if v.LosesBCCOnDeadLetter() {
			return "", fmt.Errorf("apply %s: %s; nothing was declared (upgrade to 3.13.3 or later, or use --layout prefix)", l.Name, bccBrokenText(v.String()))
		}
		return "", nil
	}
	return "rungs: warning: " + oneLine(broker.Redact(fmt.Sprintf("the broker's version was not checked (%v); the direct layout needs a RabbitMQ that keeps BCC keys when dead-lettering (not 3.13.0 to 3.13.2)", err))), nil
}
