package topology

import (
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
)

// suffixLayout is the binary ladder of the seed's Terraform module, name for
// name and key for key, so that rungs recognises, traces, publishes into and
// purges a ladder that module deployed:
//
//	NAME.ingest              topic exchange publishers send to
//	NAME.delay.<n>           queue, TTL n units, dead-letters to:
//	NAME.delay.<n>.done      topic exchange routing to the next rung
//	NAME.done                queue where every message ends
//
// Keys are exactly Levels binary digits; binding keys start with "#" and pin
// positions from the right (#.0.1.*). The module's optional ingest→done
// binding for a zero delay (#.0.0.0.0) is part of the plan, as the seed
// recommends. There are no destinations and no alternate exchanges: the
// module declares none, and adding arguments would make its exchanges drift.
// With a unit of 1s (the module's only unit), n is in seconds.
type suffixLayout struct{}

func (suffixLayout) Name() string { return "suffix" }
func (suffixLayout) Describe() string {
	return "the Terraform ladder of seed 003: NAME.delay.<n>, keys like #.0.1.*, one done queue"
}

func (suffixLayout) normalize(l Ladder) (Ladder, error) {
	if l.Radix != 2 {
		return l, fmt.Errorf("%w: the suffix layout is binary (radix 2), not %d", ErrInvalidLadder, l.Radix)
	}
	if len(l.Targets) > 0 {
		return l, fmt.Errorf("%w: the suffix layout delivers every message to %s.done; it has no destinations", ErrNoDest, l.Name)
	}
	return l, nil
}

func (suffixLayout) ingest(l Ladder) string { return l.Name + ".ingest" }
func (suffixLayout) done(l Ladder) string   { return l.Name + ".done" }
func (suffixLayout) rungQueue(l Ladder, level int) string {
	return fmt.Sprintf("%s.delay.%d", l.Name, uint64(1)<<level)
}
func (s suffixLayout) rungDone(l Ladder, level int) string { return s.rungQueue(l, level) + ".done" }

func (s suffixLayout) Rungs(l Ladder) []Rung {
	var rs []Rung
	for level := l.Levels - 1; level >= 0; level-- {
		rs = append(rs, Rung{Level: level, Digit: 1, Queue: s.rungQueue(l, level), TTL: l.RungTTL(level, 1), DeadLetter: s.rungDone(l, level)})
	}
	return rs
}

func (s suffixLayout) Terminals(l Ladder) []Terminal {
	return []Terminal{{RoleDone, s.done(l)}}
}

func (s suffixLayout) Plan(l Ladder) Plan {
	plan := Plan{Ladder: l}
	topic := func(name string) Exchange { return Exchange{Name: name, Type: "topic", Durable: true} }
	plan.Exchanges = append(plan.Exchanges, topic(s.ingest(l)))
	for level := l.Levels - 1; level >= 0; level-- {
		plan.Exchanges = append(plan.Exchanges, topic(s.rungDone(l, level)))
	}
	for _, r := range s.Rungs(l) {
		plan.Queues = append(plan.Queues, Queue{Name: r.Queue, Durable: true, Args: rungArgs(l, Args{
			"x-message-ttl":          ttlMillis(r.TTL),
			"x-dead-letter-exchange": r.DeadLetter,
		})})
	}
	done := Queue{Name: s.done(l), Durable: true}
	if l.QueueType == Quorum {
		done.Args = Args{"x-queue-type": string(Quorum)}
	}
	plan.Queues = append(plan.Queues, done)
	bind := func(src, dst, key string) {
		plan.Bindings = append(plan.Bindings, Binding{Source: src, Destination: dst, DestinationType: ToQueue, RoutingKey: key})
	}
	// The module's three binding families, in its order: ingest → first
	// rung, rung → next rung, rung → done; then the zero-delay binding.
	for dest := l.Levels - 1; dest >= 0; dest-- {
		bind(s.ingest(l), s.rungQueue(l, dest), pattern([]string{"#"}, repeat("0", l.Levels-1-dest), []string{"1"}, repeat("*", dest)))
	}
	for src := l.Levels - 1; src >= 0; src-- {
		for dest := src - 1; dest >= 0; dest-- {
			bind(s.rungDone(l, src), s.rungQueue(l, dest), pattern([]string{"#"}, repeat("0", src-1-dest), []string{"1"}, repeat("*", dest)))
		}
	}
	for src := l.Levels - 1; src >= 0; src-- {
		bind(s.rungDone(l, src), s.done(l), pattern([]string{"#"}, repeat("0", src)))
	}
	bind(s.ingest(l), s.done(l), pattern([]string{"#"}, repeat("0", l.Levels)))
	return plan
}

func (s suffixLayout) Entry(l Ladder, _ uint64) string { return s.ingest(l) }

func (suffixLayout) Key(l Ladder, units uint64, dest string) (string, error) {
	if dest != "" {
		return "", fmt.Errorf("%w: the suffix layout delivers every message to %s.done; drop the destination %q", ErrNoDest, l.Name, dest)
	}
	return joinKey(digitKey(l, units), "")
}

func (suffixLayout) Decode(l Ladder, key string) (uint64, string, error) {
	words := splitWords(key)
	if len(words) != l.Levels {
		// The bindings' leading "#" would swallow extra high digits and
		// deliver early; say so rather than guess.
		return 0, "", fmt.Errorf("%w: %q has %d words, %s needs exactly %d binary digits", ErrBadKey, key, len(words), l.Name, l.Levels)
	}
	u, ok := readDigits(words, 2)
	if !ok {
		return 0, "", fmt.Errorf("%w: %q is not %d binary digits", ErrBadKey, key, l.Levels)
	}
	return u, "", nil
}

func (s suffixLayout) Target(l Ladder, dest string) (string, error) {
	if dest != "" {
		return "", fmt.Errorf("%w: the suffix layout delivers every message to %s", ErrNoDest, s.done(l))
	}
	return s.done(l), nil
}

func (s suffixLayout) Owns(l Ladder, name string) bool {
	if name == s.ingest(l) || name == s.done(l) {
		return true
	}
	m := suffixRung.FindStringSubmatch(name)
	return m != nil && m[1] == l.Name
}

func (suffixLayout) IsTargetBinding(Ladder, Binding) (string, bool) { return "", false }

var suffixRung = regexp.MustCompile(`^(.+)\.delay\.(\d+)(\.done)?$`)

func (s suffixLayout) Discover(snap Snapshot) []Ladder {
	found := map[string][]rungFit{}
	qtype := map[string]QueueType{}
	votes := map[string]*strategyVote{}
	for _, q := range snap.Queues {
		m := suffixRung.FindStringSubmatch(q.Name)
		if m == nil || m[3] != "" {
			continue
		}
		n, err := strconv.ParseUint(m[2], 10, 64)
		if err != nil || n == 0 || n&(n-1) != 0 {
			continue
		}
		ttl, ok := q.TTL()
		if !ok {
			continue
		}
		if dlx, _ := q.DeadLetterExchange(); dlx != q.Name+".done" {
			continue
		}
		level := bits.TrailingZeros64(n)
		found[m[1]] = append(found[m[1]], rungFit{level, 1, ttl})
		if _, seen := qtype[m[1]]; !seen || level == 0 {
			qtype[m[1]] = q.QueueType()
		}
		if votes[m[1]] == nil {
			votes[m[1]] = &strategyVote{}
		}
		votes[m[1]].add(q, ttl)
	}
	var out []Ladder
	for name, rs := range found {
		levels := 0
		for _, r := range rs {
			levels = max(levels, r.level+1)
		}
		unit, ok := inferUnit(rs, 2)
		if !ok {
			continue
		}
		l, err := votes[name].normalize(Ladder{Name: name, Vhost: snap.Vhost, Layout: s.Name(), Unit: unit, Levels: levels, Radix: 2, QueueType: qtype[name]})
		if err == nil {
			out = append(out, l)
		}
	}
	return sortedLadders(out)
}

func (suffixLayout) namePattern(name string) string {
	return name + `\.(?:ingest|done|delay\.\d+(?:\.done)?)`
}

func (suffixLayout) anyName() string { return `.+` }
