package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// A kombu without the fix for celery/kombu#2556 prepends a new delay
// prefix to the key of every task it retries with a delay, so the keys in
// a Celery ladder grow 56 bytes a retry until, past AMQP's 255, the retry
// cannot be published and the task is lost to the worker's error path.
// The keys live in the messages, not the topology, so doctor reads the
// heads of the ladder's rungs, and only where reading changes nothing on
// the release (GatePeek in read-only mode): doctor reports, it never
// changes the broker. Elsewhere it says how to look.

// KeySampleSize is how many messages doctor reads from the head of each
// rung of a Celery ladder that holds any: a stacked key is a property of
// a producer's kombu, so a few messages show it, and a ladder of millions
// costs doctor no more than a ladder of hundreds.
const KeySampleSize = 50

// KeyPeeker reads the head of a queue and hands it back (broker.Conn.Peek).
type KeyPeeker interface {
	Peek(ctx context.Context, queue string, n int) (broker.PeekResult, error)
}

// KeySample is what doctor read of one Celery ladder's routing keys.
type KeySample struct {
	Ladder string
	// Sampled messages were read, at the heads of Rungs rungs; Stacked of
	// them carry stacked prefixes, the longest with FewestRetriesLeft
	// delayed retries left.
	Sampled, Rungs    int
	Stacked           int
	FewestRetriesLeft int
	// Unread, when set, is why the rungs were not read: reading them
	// would change them on this release.
	Unread string
	Err    error
}

// SampleKeys reads the routing keys at the heads of a Celery ladder's
// rungs that hold messages (snap has their depths), through the read-only
// scan gate. A ladder of another layout has no stacked keys: the zero
// sample.
func SampleKeys(ctx context.Context, facts PeekFacter, p KeyPeeker, l topology.Ladder, snap topology.Snapshot, ladders []topology.Ladder) KeySample {
	s := KeySample{Ladder: l.Name}
	if l.Layout != "celery" {
		return s
	}
	plan, err := PlanScan(ctx, facts, ScanRequest{Ladder: l, Snap: snap, Ladders: ladders, ReadOnly: true})
	var refused *ScanRefusal
	switch {
	case errors.As(err, &refused):
		s.Unread = refused.Gate.Why
		return s
	case err != nil:
		s.Err = err
		return s
	}
	for _, r := range plan.Rungs {
		if r.Queue.Stats.Ready == 0 {
			continue
		}
		res, err := p.Peek(ctx, r.Queue.Name, KeySampleSize)
		if err != nil {
			s.Err = err
			return s
		}
		s.Rungs++
		for _, m := range res.Messages {
			s.Sampled++
			if n, left := l.KeyStack(m.RoutingKey); n > 0 {
				if s.Stacked == 0 || left < s.FewestRetriesLeft {
					s.FewestRetriesLeft = left
				}
				s.Stacked++
			}
		}
	}
	return s
}

// checkCeleryKeys reports each Celery ladder's sampled keys.
func checkCeleryKeys(f DoctorFacts, out *Findings) {
	for _, vh := range f.Vhosts {
		for _, s := range vh.KeySamples {
			out.add(celeryKeyFinding(DelayArea(vh.Vhost), s))
		}
	}
}

// celeryKeyFinding is the finding of one sample; its Status is "" when
// there is nothing to say (no message waits).
func celeryKeyFinding(area string, s KeySample) Finding {
	obj := "Celery ladder " + s.Ladder
	scan := fmt.Sprintf("`rungs scheduled --ladder %s` lists every stacked key, and says what reading them costs", s.Ladder)
	switch {
	case s.Err != nil:
		return Finding{area, FindingWarn, fmt.Sprintf("%s: cannot read the routing keys at the heads of its rungs: %v", obj, s.Err)}
	case s.Unread != "":
		return Finding{area, FindingInfo, fmt.Sprintf("%s: routing keys not read for stacked delay prefixes (celery/kombu#2556), because doctor changes nothing and %s; %s", obj, s.Unread, scan)}
	case s.Sampled == 0:
		return Finding{}
	case s.Stacked == 0:
		return Finding{area, FindingOK, fmt.Sprintf("%s: no stacked delay prefix in the %s read at the heads of %s", obj, topology.Counted(s.Sampled, "routing key", "routing keys"), topology.Counted(s.Rungs, "rung", "rungs"))}
	}
	status, left := FindingWarn, fmt.Sprintf("the longest can take %s with a delay before its key passes AMQP's 255 bytes and the retry fails", topology.Counted(s.FewestRetriesLeft, "more retry", "more retries"))
	if s.FewestRetriesLeft == 0 {
		status, left = FindingProblem, "the longest cannot be retried with a delay again: its key would pass AMQP's 255 bytes and the retry would fail"
	}
	return Finding{area, status, fmt.Sprintf("%s: %d of the %s read at the heads of %s carry stacked delay prefixes (a kombu without the fix for celery/kombu#2556 adds one per delayed retry); %s. They still arrive on time (the delay is read from the first prefix). Fix: upgrade kombu on the producers; %s",
		obj, s.Stacked, topology.Counted(s.Sampled, "routing key", "routing keys"), topology.Counted(s.Rungs, "rung", "rungs"), left, scan)}
}

// add appends f unless it has nothing to say.
func (fs *Findings) add(f Finding) {
	if f.Status != "" {
		*fs = append(*fs, f)
	}
}
