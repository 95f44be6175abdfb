package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// nsbLayout is the NServiceBus v2 delay infrastructure, as its public
// documentation describes it: 28 levels, each a topic exchange and a quorum
// queue named nsb.v2.delay-level-NN with a TTL of 2^NN seconds. A level's
// exchange binds its queue on a 1 in the level's position and the next lower
// level's exchange on a 0; level 00's queue and zero binding lead to
// nsb.v2.delay-delivery, where each endpoint binds "#.<its queue>". Keys are
// 28 digits then the destination queue. The infrastructure is shared, so the
// ladder's name is fixed and every message needs a destination.
type nsbLayout struct{}

const (
	nsbName   = "nsb.v2"
	nsbLevels = 28
)

func (nsbLayout) Name() string { return "nsb" }
func (nsbLayout) Describe() string {
	return "NServiceBus v2 delay infrastructure: nsb.v2.delay-level-00..27, 1s unit, destinations required"
}

func (nsbLayout) normalize(l Ladder) (Ladder, error) {
	if l.Name != nsbName && l.Name != DefaultName {
		return l, fmt.Errorf("%w: the nsb layout's objects are named %s.*; its ladder name is fixed", ErrInvalidLadder, nsbName)
	}
	if l.Unit != time.Second || l.Levels != nsbLevels || l.Radix != 2 {
		return l, fmt.Errorf("%w: the nsb layout has 28 binary levels of 1s", ErrInvalidLadder)
	}
	l.Name, l.Levels, l.QueueType = nsbName, nsbLevels, Quorum
	return l, nil
}

func (nsbLayout) level(n int) string { return fmt.Sprintf("%s.delay-level-%02d", nsbName, n) }
func (nsbLayout) delivery() string   { return nsbName + ".delay-delivery" }

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

func (x nsbLayout) Plan(l Ladder) Plan {
	plan := Plan{Ladder: l}
	for n := l.Levels - 1; n >= 0; n-- {
		plan.Exchanges = append(plan.Exchanges, Exchange{Name: x.level(n), Type: "topic", Durable: true})
	}
	plan.Exchanges = append(plan.Exchanges, Exchange{Name: x.delivery(), Type: "topic", Durable: true})
	for _, r := range x.Rungs(l) {
		plan.Queues = append(plan.Queues, Queue{Name: r.Queue, Durable: true, Args: queueArgs(Quorum, Args{
			"x-message-ttl":          ttlMillis(r.TTL),
			"x-dead-letter-exchange": r.DeadLetter,
		})})
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
	return name == x.delivery() || nsbLevel.MatchString(name)
}

func (x nsbLayout) IsTargetBinding(_ Ladder, b Binding) (string, bool) {
	if b.Source != x.delivery() || b.DestinationType != ToQueue || b.RoutingKey != "#."+b.Destination {
		return "", false
	}
	return b.Destination, true
}

var nsbLevel = regexp.MustCompile(`^nsb\.v2\.delay-level-(\d{2})$`)

func (x nsbLayout) Discover(s Snapshot) []Ladder {
	var rs []rungFit
	for _, q := range s.Queues {
		m := nsbLevel.FindStringSubmatch(q.Name)
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
	l := Ladder{Name: nsbName, Vhost: s.Vhost, Layout: x.Name(), Unit: time.Second, Levels: nsbLevels, Radix: 2, QueueType: Quorum}
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
