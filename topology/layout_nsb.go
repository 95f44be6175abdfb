package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// nsbLayout is NServiceBus' delay infrastructure, as its public
// documentation and transport source describe it, in either of its two
// generations:
//
//	v2 (transport 7 and later, layout "nsb"):  nsb.v2.delay-level-00..27, nsb.v2.delay-delivery,
//	                                           quorum queues, at-least-once dead-lettering
//	v1 (transport 4.3 to 6, layout "nsb1"):    nsb.delay-level-00..27, nsb.delay-delivery,
//	                                           classic lazy queues (x-queue-mode: lazy)
//
// Both have 28 levels, each a topic exchange and a queue with a TTL of 2^NN
// seconds. A level's exchange binds its queue on a 1 in the level's
// position and the next lower level's exchange on a 0; level 00's queue and
// zero binding lead to the delivery exchange, where each endpoint binds
// "#.<its queue>": the queue itself (direct routing topology) or the
// endpoint's fanout exchange of the same name (conventional routing
// topology). Keys are 28 digits then the destination queue. The
// infrastructure is shared, so the ladder's name is fixed and every message
// needs a destination. The two generations can live side by side in one
// vhost (NServiceBus migrates between them), and discovery tells them apart
// by name: nothing of v1 matches v2's names or the other way round.
//
// The zero value is v2.
type nsbLayout struct{ v1 bool }

const nsbLevels = 28

func (x nsbLayout) Name() string {
	if x.v1 {
		return "nsb1"
	}
	return "nsb"
}

func (x nsbLayout) Describe() string {
	if x.v1 {
		return "NServiceBus v1 delay infrastructure (transport < 7): nsb.delay-level-00..27, classic queues, 1s unit, destinations required"
	}
	return "NServiceBus v2 delay infrastructure: nsb.v2.delay-level-00..27, 1s unit, destinations required"
}

// base is the fixed ladder name, the prefix of every object.
func (x nsbLayout) base() string {
	if x.v1 {
		return "nsb"
	}
	return "nsb.v2"
}

func (x nsbLayout) queueType() QueueType {
	if x.v1 {
		return Classic
	}
	return Quorum
}

func (x nsbLayout) normalize(l Ladder) (Ladder, error) {
	if l.Name != x.base() && l.Name != DefaultName {
		return l, fmt.Errorf("%w: the %s layout's objects are named %s.*; its ladder name is fixed", ErrInvalidLadder, x.Name(), x.base())
	}
	if l.Unit != time.Second || l.Levels != nsbLevels || l.Radix != 2 {
		return l, fmt.Errorf("%w: the %s layout has 28 binary levels of 1s", ErrInvalidLadder, x.Name())
	}
	if x.v1 && l.QueueType == Quorum {
		// v1 is classic by definition: its at-most-once dead-lettering is
		// why NServiceBus replaced it with the quorum-based v2 (layout nsb).
		return l, fmt.Errorf("%w: the nsb1 layout (NServiceBus v1) uses classic queues; v2 (layout nsb) is the quorum one", ErrInvalidLadder)
	}
	l.Name, l.Levels, l.QueueType = x.base(), nsbLevels, x.queueType()
	return l, nil
}

func (x nsbLayout) level(n int) string { return fmt.Sprintf("%s.delay-level-%02d", x.base(), n) }
func (x nsbLayout) delivery() string   { return x.base() + ".delay-delivery" }

// below is where level n's queue and zero binding lead.
func (x nsbLayout) below(n int) string {
	if n == 0 {
		return x.delivery()
	}
	return x.level(n - 1)
}

func (x nsbLayout) Rungs(l Ladder) []Rung {
	var rs []Rung
	for n := l.Levels - 1; n >= 0; n-- {
		rs = append(rs, Rung{Level: n, Digit: 1, Queue: x.level(n), TTL: l.RungTTL(n, 1), DeadLetter: x.below(n)})
	}
	return rs
}

func (nsbLayout) Terminals(Ladder) []Terminal { return nil }

// queueArgs are the arguments of a level queue of each generation.
func (x nsbLayout) queueArgs(r Rung) Args {
	a := Args{
		"x-message-ttl":          ttlMillis(r.TTL),
		"x-dead-letter-exchange": r.DeadLetter,
	}
	if x.v1 {
		a["x-queue-mode"] = "lazy"
		return a
	}
	return rungArgs(Ladder{QueueType: Quorum}, a)
}

func (x nsbLayout) Plan(l Ladder) Plan {
	plan := Plan{Ladder: l}
	for n := l.Levels - 1; n >= 0; n-- {
		plan.Exchanges = append(plan.Exchanges, Exchange{Name: x.level(n), Type: "topic", Durable: true})
	}
	plan.Exchanges = append(plan.Exchanges, Exchange{Name: x.delivery(), Type: "topic", Durable: true})
	for _, r := range x.Rungs(l) {
		plan.Queues = append(plan.Queues, Queue{Name: r.Queue, Durable: true, Args: x.queueArgs(r)})
	}
	for n := l.Levels - 1; n >= 0; n-- {
		pos := repeat("*", l.Levels-1-n)
		plan.Bindings = append(plan.Bindings,
			Binding{Source: x.level(n), Destination: x.level(n), DestinationType: ToQueue, RoutingKey: pattern(pos, []string{"1", "#"})},
			Binding{Source: x.level(n), Destination: x.below(n), DestinationType: ToExchange, RoutingKey: pattern(pos, []string{"0", "#"})})
	}
	for _, t := range l.Targets {
		plan.Bindings = append(plan.Bindings, Binding{Source: x.delivery(), Destination: t, DestinationType: ToQueue, RoutingKey: "#." + t})
	}
	return plan
}

// Entry is the level of the highest set bit, as NServiceBus publishes: lower
// zero levels would only pass the message on.
func (x nsbLayout) Entry(l Ladder, units uint64) string {
	n := 0
	for u := units; u > 1; u >>= 1 {
		n++
	}
	return x.level(n)
}

func (nsbLayout) Key(l Ladder, units uint64, dest string) (string, error) {
	if dest == "" {
		return "", fmt.Errorf("%w: an NServiceBus delay needs a destination queue (--to)", ErrBadDest)
	}
	return joinKey(digitKey(l, units), dest)
}

func (nsbLayout) Decode(l Ladder, key string) (uint64, string, error) {
	return decodeFixed(l, key)
}

// decodeFixed reads the keys of the 28-digit foreign ladders (NServiceBus,
// Celery): exactly Levels binary digits, then a destination.
func decodeFixed(l Ladder, key string) (uint64, string, error) {
	words := splitWords(key)
	if len(words) <= l.Levels {
		return 0, "", fmt.Errorf("%w: %q needs %d binary digits and a destination", ErrBadKey, key, l.Levels)
	}
	u, ok := readDigits(words[:l.Levels], 2)
	if !ok {
		return 0, "", fmt.Errorf("%w: %q does not start with %d binary digits", ErrBadKey, key, l.Levels)
	}
	return u, strings.Join(words[l.Levels:], "."), nil
}

func (nsbLayout) Target(_ Ladder, dest string) (string, error) {
	if dest == "" {
		return "", fmt.Errorf("%w: an NServiceBus delay needs a destination queue", ErrBadDest)
	}
	return dest, checkDest(dest)
}

func (x nsbLayout) Owns(_ Ladder, name string) bool {
	return name == x.delivery() || x.levelRE().MatchString(name)
}

// IsTargetBinding recognises both of NServiceBus' ways to attach an
// endpoint: the direct routing topology binds the queue, the conventional
// one (the default) binds the endpoint's exchange of the same name.
func (x nsbLayout) IsTargetBinding(_ Ladder, b Binding) (string, bool) {
	if b.Source != x.delivery() || b.RoutingKey != "#."+b.Destination || checkDest(b.Destination) != nil {
		return "", false
	}
	if b.DestinationType != ToQueue && b.DestinationType != ToExchange {
		return "", false
	}
	return b.Destination, true
}

var (
	nsbLevel  = regexp.MustCompile(`^nsb\.v2\.delay-level-(\d{2})$`)
	nsb1Level = regexp.MustCompile(`^nsb\.delay-level-(\d{2})$`)
)

func (x nsbLayout) levelRE() *regexp.Regexp {
	if x.v1 {
		return nsb1Level
	}
	return nsbLevel
}

func (x nsbLayout) Discover(s Snapshot) []Ladder {
	var rs []rungFit
	for _, q := range s.Queues {
		m := x.levelRE().FindStringSubmatch(q.Name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if ttl, ok := q.TTL(); ok {
			rs = append(rs, rungFit{n, 1, ttl})
		}
	}
	if len(rs) == 0 {
		return nil
	}
	l := Ladder{Name: x.base(), Vhost: s.Vhost, Layout: x.Name(), Unit: time.Second, Levels: nsbLevels, Radix: 2, QueueType: x.queueType()}
	for _, b := range s.Bindings {
		if dest, ok := x.IsTargetBinding(l, b); ok {
			l.Targets = append(l.Targets, dest)
		}
	}
	nl, err := l.Normalize()
	if err != nil {
		return nil
	}
	return []Ladder{nl}
}

// namePattern ignores the name: NServiceBus' objects have fixed names.
func (x nsbLayout) namePattern(string) string {
	return regexp.QuoteMeta(x.base()) + `\.delay-(?:delivery|level-\d{2})`
}

func (x nsbLayout) anyName() string { return regexp.QuoteMeta(x.base()) }
