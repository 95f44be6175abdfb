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

// NewLadderLayout is the layout rungs gives a new ladder of queue type q
// on this release when --layout does not choose one: the prefix layout
// where the direct layout would lose BCC keys (every dead-lettering on
// 3.13.0 to 3.13.2, whatever the queue type; a quorum rung's dead-letter
// retry before 3.13), DefaultLayout elsewhere. Measured on the default
// quorum ladder (docs/benchmarks/default-layout.md, "Direct or prefix on the default quorum
// ladder, per version"): from 3.13.3 direct costs the broker less CPU per
// message than prefix on every measured release, which outweighs the BCC
// header it costs producers. An unknown version gets DefaultLayout.
func (v Version) NewLadderLayout(q QueueType) string {
	if (Ladder{Layout: DefaultLayout, QueueType: q}).RiskOn(v) != LayoutSafe {
		return "prefix"
	}
	return DefaultLayout
}

// How quorum queues count deliveries differs by release, and rungs must
// know it to say what a peek or a partial move does to a message. Each
// rule below was measured against RabbitMQ 3.10.8, 4.0.5 and 4.3.6 with
// basic.get then basic.nack(requeue), basic.reject(requeue) or a channel
// close (broker/move_test.go keeps them checked on each).
//
// Releases between those measured (4.1, 4.2) are taken to behave as the
// older measured release: a rule that is wrong there errs on the careful
// side (a peek that asks for --force it did not need).

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

// QuorumRequeueNackCounts reports whether a basic.nack with requeue raises
// a quorum message's x-delivery-count and counts toward its delivery limit.
// Before 4.3 every hand-back counted. From 4.3.0 a nack is a "return" that
// does not (measured on 4.3.6: a limit of 2 never dead-lettered after
// three nacks), while basic.reject with requeue and a channel closed with
// the message unacknowledged still count. An unknown version counts.
func (v Version) QuorumRequeueNackCounts() bool {
	return !v.AtLeast(4, 3, 0)
}

// QuorumStampsAcquiredCount reports whether quorum deliveries carry
// x-acquired-count, which counts every hand-out, a returning nack included
// (4.3.6 stamps it; 4.0.5 and 3.10.8 do not). A replay or retry must not
// copy it: it describes the message's past in one queue.
func (v Version) QuorumStampsAcquiredCount() bool {
	return v.AtLeast(4, 3, 0)
}

// QuorumPurgeTakesExpired reports whether queue.purge of a quorum queue
// also deletes the expired messages waiting for at-least-once
// dead-lettering (messages_dlx), and those a delayed retry holds
// (messages_delayed). Measured: 4.3.6 purged 3 such expired messages and
// reported 3, and reported 5 for 2 ready and 3 delayed ones; 3.10.8 and
// 4.0.5 reported 0 and kept the expired ones.
func (v Version) QuorumPurgeTakesExpired() bool {
	return v.AtLeast(4, 3, 0)
}

// QuorumDelayedRetry reports whether quorum queues honour delayed retry
// (x-delayed-retry-type/-min/-max, or the delayed-retry-* policy keys):
// a returned or failed message is held back for a while before it is
// ready again, and reported as messages_delayed. 4.3.0 added it; older
// releases accept the arguments and ignore them (measured on 4.0.5: a
// 1 s rung with delayed-retry-min 3 s dead-lettered a peeked message at
// 1.0 s; on 4.3.6 at 3.1 s).
func (v Version) QuorumDelayedRetry() bool {
	return v.AtLeast(4, 3, 0)
}

// QuorumDelayedRetryPolicy reports whether the release honours delayed
// retry set by a policy's delayed-retry-* keys. 4.3.0 shipped without
// them (its policy validation refuses the keys, so they never take
// effect; rabbitmq-server #16394, fixed by #16395 in 4.3.1); the queue
// arguments worked from 4.3.0. Measured on 4.3.6: a policy with
// delayed-retry-type failed held a rejected message (messages_delayed 1).
func (v Version) QuorumDelayedRetryPolicy() bool {
	return v.AtLeast(4, 3, 1)
}

// DefinitionsETag reports whether GET /api/definitions/{vhost} answers an
// If-None-Match with 304 Not Modified when nothing changed (from 4.3.5;
// measured on 4.3.6). Older releases send no ETag, so asking costs nothing.
func (v Version) DefinitionsETag() bool {
	return v.AtLeast(4, 3, 5)
}

// Oldest is the oldest known version of vs, or the zero Version when none
// is known. In a cluster of mixed releases (a rolling upgrade), a queue
// may live on any node, so the oldest node's rules are the ones to heed.
func Oldest(vs ...Version) Version {
	var out Version
	for _, v := range vs {
		if v.Known() && (!out.Known() || v.Less(out)) {
			out = v
		}
	}
	return out
}

// PolicyNudgeRevivesDeadLettering reports whether applying a policy to a
// stalled quorum rung restarts its dead-letter worker (see broker's
// NudgeDeadLettering). Measured: it does on 3.10.8 and 4.0.5; on 4.3.6 a
// stalled rung stayed stalled under the policy (rabbitmq-server #16652 is
// listed as fixed in 4.3.3, but the fix is not in 4.3.6's dead-letter
// worker supervisor), while a restart of the queue's Ra member revived it.
// Later 4.3 patches are taken to be the same until measured.
func (v Version) PolicyNudgeRevivesDeadLettering() bool {
	return !v.AtLeast(4, 3, 0)
}

// QuorumMembershipAPI reports whether the management API changes a quorum
// queue's members (DELETE /api/queues/quorum/VHOST/NAME/replicas/delete and
// POST .../replicas/add, each with {"node": NODE}). Measured: the routes
// answer on 4.0.5 and 4.3.6; 3.10.8 has none (the HTTP API reference of
// neither lists them).
func (v Version) QuorumMembershipAPI() bool { return v.AtLeast(4, 0, 0) }

// StallRemedy is how `rungs unstall` revives a stalled quorum rung.
type StallRemedy int

const (
	// RemedyRaRestart restarts the queue's Ra member through rabbitmqctl
	// on a node: it revived every stalled rung it was tried on (3.10.8,
	// 4.0.5, 4.3.6), but needs node access.
	RemedyRaRestart StallRemedy = iota
	// RemedyPolicy applies a policy that changes nothing (see
	// PolicyNudgeRevivesDeadLettering).
	RemedyPolicy
	// RemedyLeaderMove removes the member that leads the queue and adds it
	// back, through the management API: another member is elected and
	// starts a dead-letter worker of its own. Measured on a 4.3.6 cluster
	// of three: it drained both stalled rungs it was tried on within a
	// statistics interval, where removing and re-adding a follower did not.
	RemedyLeaderMove
)

// StallRemedy is the remedy that needs no node access for a stalled rung
// with that many members, or RemedyRaRestart where there is none.
func (v Version) StallRemedy(members int) StallRemedy {
	switch {
	case v.PolicyNudgeRevivesDeadLettering():
		return RemedyPolicy
	case members >= 2 && v.QuorumMembershipAPI():
		return RemedyLeaderMove
	}
	return RemedyRaRestart
}
