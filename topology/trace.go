package topology

import (
	"fmt"
	"strings"
	"time"
)

// Hop is one rung a message waits in.
type Hop struct {
	Level int
	Digit int
	Queue string
	TTL   time.Duration
	// Start and End are the times, from publish, at which the message
	// enters the rung and is dead-lettered out of it (End = Start + TTL).
	Start, End time.Duration
}

// Trace is the path a delay takes through a ladder, computed from the
// ladder's arithmetic (not by simulating bindings; the tests check both
// agree, which is what proves the bindings right).
type Trace struct {
	Ladder    Ladder
	Requested time.Duration // the delay asked for
	Delay     time.Duration // after rounding up to the unit
	Key       string        // routing key to publish with
	Exchange  string        // exchange to publish to
	// BCC is the BCC header to publish with, for layouts that route by it
	// (direct); nil for the others. A message without it is unroutable.
	BCC    []string
	Dest   string // destination ("" for the default)
	Hops   []Hop
	Target string // queue the message ends in
}

// Trace computes the path of a delay and destination through the ladder.
func (l Ladder) Trace(d time.Duration, dest string) (Trace, error) {
	lay := l.layout()
	units, err := l.Units(d)
	if err != nil {
		return Trace{}, err
	}
	key, err := lay.Key(l, units, dest)
	if err != nil {
		return Trace{}, err
	}
	target, err := lay.Target(l, dest)
	if err != nil {
		return Trace{}, err
	}
	bcc, err := l.bccUnits(units, dest)
	if err != nil {
		return Trace{}, err
	}
	t := Trace{
		Ladder: l, Requested: d, Delay: time.Duration(units) * l.Unit,
		Key: key, Exchange: lay.Entry(l, units), Dest: dest, Target: target, BCC: bcc,
	}
	rungs := map[[2]int]Rung{}
	for _, r := range lay.Rungs(l) {
		rungs[[2]int{r.Level, r.Digit}] = r
	}
	digits := l.Digits(units)
	var at time.Duration
	for i, d := range digits {
		if d == 0 {
			continue
		}
		level := l.Levels - 1 - i
		r := rungs[[2]int{level, d}]
		t.Hops = append(t.Hops, Hop{Level: level, Digit: d, Queue: r.Queue, TTL: r.TTL, Start: at, End: at + r.TTL})
		at += r.TTL
	}
	return t, nil
}

// Headers are the headers that route the message besides its routing key:
// {"BCC": [keys...]} for a layout that routes by BCC, nil otherwise. The
// values are AMQP field-array strings, as a client library encodes them.
func (t Trace) Headers() map[string]any {
	if len(t.BCC) == 0 {
		return nil
	}
	return map[string]any{HeaderBCC: BCCValue(t.BCC)}
}

// BCCValue is a BCC header's value: an AMQP array of strings.
func BCCValue(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// Total is the time the message spends in the ladder: the sum of its hops.
func (t Trace) Total() time.Duration {
	if len(t.Hops) == 0 {
		return 0
	}
	return t.Hops[len(t.Hops)-1].End
}

// String is a one-line summary: key and queue path.
func (t Trace) String() string {
	var path []string
	for _, h := range t.Hops {
		path = append(path, fmt.Sprintf("%s(%s)", h.Queue, FormatDelay(h.TTL)))
	}
	path = append(path, t.Target)
	return fmt.Sprintf("%s via %s: %s", FormatDelay(t.Delay), t.Key, strings.Join(path, " → "))
}

// MeanHops is the expected number of rungs a message with a uniformly random
// delay in [0, MaxDelay] visits: each level's digit is non-zero with
// probability (radix-1)/radix.
func (l Ladder) MeanHops() float64 {
	return float64(l.Levels) * float64(l.Radix-1) / float64(l.Radix)
}
