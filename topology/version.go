package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a RabbitMQ release number. The zero value means unknown: a
// broker that did not say, or said something unreadable.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "3.10.8", "4.0.5", "3.13.0-rc.1" or "4.1.0+2.g1234"
// (pre-release and build suffixes are ignored, a missing patch is 0).
func ParseVersion(s string) (Version, bool) {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "-")
	s, _, _ = strings.Cut(s, "+")
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, false
		}
		n[i] = v
	}
	if n[0] == 0 {
		return Version{}, false
	}
	return Version{n[0], n[1], n[2]}, true
}

// Known reports whether the version was read.
func (v Version) Known() bool { return v.Major > 0 }

// Less orders versions by major, minor, then patch.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// AtLeast reports whether v is known and not older than major.minor.patch.
func (v Version) AtLeast(major, minor, patch int) bool {
	return v.Known() && !v.Less(Version{major, minor, patch})
}

// String is the dotted form, or "unknown".
func (v Version) String() string {
	if !v.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// LosesBCCOnDeadLetter reports whether this release re-routes a
// dead-lettered message without the keys of its BCC header: 3.13.0 to
// 3.13.2 did (fixed in 3.13.3), which leaves every message of a direct
// ladder in its unroutable queue after the first rung. An unknown version
// is not assumed broken: its doctor and apply say the version was unread.
func (v Version) LosesBCCOnDeadLetter() bool {
	return v.AtLeast(3, 13, 0) && v.Less(Version{3, 13, 3})
}

// LosesBCCOnDeadLetterRetry reports whether this release's at-least-once
// dead-lettering (quorum queues) drops a message's BCC keys when it has to
// retry forwarding it: before 3.13 the retry re-routes by the routing keys
// of the message's newest x-death entry, which never holds BCC. A retry
// happens when the dead-letter exchange or every route was missing (as
// while a node boots) or a confirm timed out; measured on 3.10.8, a
// stalled quorum rung of a direct ladder sent the 32 messages its
// dead-letter worker held (its prefetch) to the unroutable queue. From
// 3.13 the worker keeps the original routing keys, BCC included; 3.13.0 to
// 3.13.2 lose BCC on every dead-lettering anyway (LosesBCCOnDeadLetter).
// So a quorum ladder that routes by BCC is safe from 3.13.3.
func (v Version) LosesBCCOnDeadLetterRetry() bool {
	return v.Known() && v.Less(Version{3, 13, 0})
}

// How quorum queues count deliveries differs by release, and rungs must
// know it to say what a peek or a partial move does to a message. Each
// rule below was measured against RabbitMQ 3.10.8 and 4.0.5 with basic.get
// and basic.nack(requeue) (broker/peek_test.go keeps them checked).

// QuorumDefaultDeliveryLimit is the delivery limit a quorum queue has when
// no argument or policy sets one: none (0) before RabbitMQ 4.0, 20 from
// 4.0. A message handed back more often than its limit is dead-lettered,
// which from a rung means it moves on before its time. An unknown version
// is taken to have the default, so that rungs errs on the careful side.
func (v Version) QuorumDefaultDeliveryLimit() int {
	if v.Known() && v.Major < 4 {
		return 0
	}
	return 20
}

// DeliveryLimitOf reads a delivery-limit value (x-delivery-limit argument
// or delivery-limit policy key) as this release applies it. The result is
// > 0 for a limit, 0 for none (unset, or a negative value on 4.0+, which
// is how 4.0 turns its default off), and -1 when every hand-back
// dead-letters: RabbitMQ 3.x reads a negative limit so.
func (v Version) DeliveryLimitOf(n int64) int {
	switch {
	case n > 0:
		return int(n)
	case n == 0:
		return 0
	case v.Known() && v.Major < 4:
		return -1
	}
	return 0
}

// QuorumOmitsZeroDeliveryCount reports whether a quorum queue leaves the
// x-delivery-count header out of a message never handed back (4.0 does;
// 3.x sends 0), so that an absent header means 0, not "not counted".
func (v Version) QuorumOmitsZeroDeliveryCount() bool {
	return !v.Known() || v.Major >= 4
}
