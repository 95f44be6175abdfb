package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// prefixLayout is rungs' own ladder. The routing key starts with the digits,
// most significant first, in fixed positions, and ends with the destination:
//
//	0.0.1.0.1.orders.retry
//
// Binding keys pin positions from the left and end in "#" (*.*.0.1.#), which
// RabbitMQ's topic trie matches without the backtracking a leading "#"
// costs. Each level has its own dead-letter exchange, so a message only ever
// meets the bindings that can apply to its remaining digits. Messages whose
// delay is over pass through NAME.deliver, where a destination queue binds
// with Levels stars and its own words; the default is NAME.done. Every
// exchange has NAME.unroutable as alternate exchange, so a message nobody
// routes is kept, not dropped.
type prefixLayout struct{}

func (prefixLayout) Name() string { return "prefix" }
func (prefixLayout) Describe() string {
	return "rungs' own ladder: digits first, fixed-position bindings, a dead-letter exchange per level, destinations"
}

func (prefixLayout) normalize(l Ladder) (Ladder, error) { return l, nil }

func (prefixLayout) ingest(l Ladder) string     { return l.Name + ".ingest" }
func (prefixLayout) deliver(l Ladder) string    { return l.Name + ".deliver" }
func (prefixLayout) done(l Ladder) string       { return l.Name + ".done" }
func (prefixLayout) unroutable(l Ladder) string { return l.Name + ".unroutable" }
func (prefixLayout) expired(l Ladder, level int) string {
	return fmt.Sprintf("%s.rung.%02d.expired", l.Name, level)
}

func (prefixLayout) rungQueue(l Ladder, level, digit int) string {
	if l.Radix == 2 {
		return fmt.Sprintf("%s.rung.%02d", l.Name, level)
	}
	return fmt.Sprintf("%s.rung.%02d.%s", l.Name, level, digitWord(digit))
}

func (p prefixLayout) Rungs(l Ladder) []Rung {
	var rs []Rung
	for level := l.Levels - 1; level >= 0; level-- {
		for d := l.Radix - 1; d >= 1; d-- {
			rs = append(rs, Rung{Level: level, Digit: d, Queue: p.rungQueue(l, level, d), TTL: l.RungTTL(level, d), DeadLetter: p.expired(l, level)})
		}
	}
	return rs
}

func (p prefixLayout) Terminals(l Ladder) []Terminal {
	return []Terminal{{RoleDone, p.done(l)}, {RoleUnroutable, p.unroutable(l)}}
}

// objects starts the plan of a ladder shaped like this layout's (the
// direct layout shares it): the unroutable fanout exchange, the entry
// exchanges, one exchange a level, all of type exType with the unroutable
// exchange as alternate; then the unroutable, done and rung queues.
func (p prefixLayout) objects(l Ladder, exType string, entry ...string) Plan {
	ae := Args{"alternate-exchange": p.unroutable(l)}
	ex := func(name string) Exchange {
		return Exchange{Name: name, Type: exType, Durable: true, Args: ae}
	}
	plan := Plan{Ladder: l}
	plan.Exchanges = append(plan.Exchanges, Exchange{Name: p.unroutable(l), Type: "fanout", Durable: true})
	for _, name := range entry {
		plan.Exchanges = append(plan.Exchanges, ex(name))
	}
	for level := l.Levels - 1; level >= 0; level-- {
		plan.Exchanges = append(plan.Exchanges, ex(p.expired(l, level)))
	}
	// The unroutable queue is always classic-compatible with any ladder: it
	// has no TTL, so a quorum ladder's queue type is kept for durability.
	plan.Queues = append(plan.Queues,
		Queue{Name: p.unroutable(l), Durable: true, Args: rungArgs(l, Args{})},
		Queue{Name: p.done(l), Durable: true, Args: rungArgs(l, Args{})})
	for _, r := range p.Rungs(l) {
		plan.Queues = append(plan.Queues, Queue{Name: r.Queue, Durable: true, Args: rungArgs(l, Args{
			"x-message-ttl":          ttlMillis(r.TTL),
			"x-dead-letter-exchange": r.DeadLetter,
		})})
	}
	for i := range plan.Queues {
		if len(plan.Queues[i].Args) == 0 {
			plan.Queues[i].Args = nil
		}
	}
	return plan
}

func (p prefixLayout) Plan(l Ladder) Plan {
	plan := p.objects(l, "topic", p.ingest(l), p.deliver(l))
	bind := func(src, dst, dtype, key string) {
		plan.Bindings = append(plan.Bindings, Binding{Source: src, Destination: dst, DestinationType: dtype, RoutingKey: key})
	}
	bind(p.unroutable(l), p.unroutable(l), ToQueue, "")
	// From an exchange that has consumed the digits above level `above`
	// (above == Levels for the ingest exchange), a message goes to the rung
	// of its highest remaining non-zero digit, or on to delivery.
	fromAbove := func(src string, above int) {
		consumed := l.Levels - above
		for level := above - 1; level >= 0; level-- {
			for d := l.Radix - 1; d >= 1; d-- {
				key := pattern(repeat("*", consumed), repeat("0", above-1-level), []string{digitWord(d)}, repeat("*", level), []string{"#"})
				bind(src, p.rungQueue(l, level, d), ToQueue, key)
			}
		}
		bind(src, p.deliver(l), ToExchange, pattern(repeat("*", consumed), repeat("0", above), []string{"#"}))
	}
	fromAbove(p.ingest(l), l.Levels)
	for level := l.Levels - 1; level >= 0; level-- {
		fromAbove(p.expired(l, level), level)
	}
	bind(p.deliver(l), p.done(l), ToQueue, pattern(repeat("*", l.Levels)))
	for _, t := range l.Targets {
		bind(p.deliver(l), t, ToQueue, p.targetKey(l, t))
	}
	return plan
}

func (prefixLayout) targetKey(l Ladder, dest string) string {
	return pattern(repeat("*", l.Levels), []string{dest})
}

func (p prefixLayout) Entry(l Ladder, _ uint64) string { return p.ingest(l) }

func (prefixLayout) Key(l Ladder, units uint64, dest string) (string, error) {
	return joinKey(digitKey(l, units), dest)
}

func (prefixLayout) Decode(l Ladder, key string) (uint64, string, error) {
	words := splitWords(key)
	if len(words) < l.Levels {
		return 0, "", fmt.Errorf("%w: %q has %d words, %s needs %d digits first", ErrBadKey, key, len(words), l.Name, l.Levels)
	}
	u, ok := readDigits(words[:l.Levels], l.Radix)
	if !ok {
		return 0, "", fmt.Errorf("%w: %q does not start with %d base-%d digits", ErrBadKey, key, l.Levels, l.Radix)
	}
	if len(words) == l.Levels {
		return u, "", nil
	}
	// "0.1." is not "0.1": its empty last word routes nowhere.
	dest := strings.Join(words[l.Levels:], ".")
	if err := checkDest(dest); err != nil {
		return 0, "", fmt.Errorf("%w: %q: %v", ErrBadKey, key, err)
	}
	return u, dest, nil
}

func (p prefixLayout) Target(l Ladder, dest string) (string, error) {
	if dest == "" {
		return p.done(l), nil
	}
	return dest, checkDest(dest)
}

func (p prefixLayout) Owns(l Ladder, name string) bool {
	switch name {
	case p.ingest(l), p.deliver(l), p.done(l), p.unroutable(l):
		return true
	}
	m := prefixRung.FindStringSubmatch(name)
	return m != nil && m[1] == l.Name
}

func (p prefixLayout) IsTargetBinding(l Ladder, b Binding) (string, bool) {
	if b.Source != p.deliver(l) || b.DestinationType != ToQueue {
		return "", false
	}
	words := splitWords(b.RoutingKey)
	if len(words) <= l.Levels {
		return "", false
	}
	for _, w := range words[:l.Levels] {
		if w != "*" {
			return "", false
		}
	}
	dest := strings.Join(words[l.Levels:], ".")
	if dest != b.Destination || checkDest(dest) != nil {
		return "", false
	}
	return dest, true
}

// prefixRung matches rung queues (NAME.rung.NN or NAME.rung.NN.D) and their
// dead-letter exchanges (NAME.rung.NN.expired).
var prefixRung = regexp.MustCompile(`^(.+)\.rung\.(\d{2})(?:\.([1-9a-f]))?(\.expired)?$`)

func (p prefixLayout) Discover(s Snapshot) []Ladder {
	return discoverRungLadders(s, p.Name(), func(name string) bool {
		_, deliver := s.Exchange(name + ".deliver")
		_, ingest := s.Exchange(name + ".ingest")
		return (deliver || ingest) && !isDirectLadder(s, name)
	}, p.IsTargetBinding)
}

// discoverRungLadders finds the ladders named like the prefix layout's
// (NAME.rung.NN[.D]) that accept says are of this layout, inferring levels,
// radix and unit from the rungs and targets from the bindings.
func discoverRungLadders(s Snapshot, layout string, accept func(name string) bool, isTarget func(Ladder, Binding) (string, bool)) []Ladder {
	found := map[string][]rungFit{}
	qtype := map[string]QueueType{}
	votes := map[string]*strategyVote{}
	for _, q := range s.Queues {
		m := prefixRung.FindStringSubmatch(q.Name)
		if m == nil || m[4] != "" {
			continue
		}
		if !accept(m[1]) {
			continue
		}
		level, _ := strconv.Atoi(m[2])
		digit := 1
		if m[3] != "" {
			d, _ := strconv.ParseInt(m[3], 16, 8)
			digit = int(d)
		}
		ttl, ok := q.TTL()
		if !ok {
			continue
		}
		found[m[1]] = append(found[m[1]], rungFit{level, digit, ttl})
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
		levels, maxDigit, suffixed := 0, 1, false
		for _, r := range rs {
			levels = max(levels, r.level+1)
			maxDigit = max(maxDigit, r.digit)
		}
		for _, q := range s.Queues {
			if m := prefixRung.FindStringSubmatch(q.Name); m != nil && m[1] == name && m[3] != "" {
				suffixed = true
			}
		}
		radix := 2
		if suffixed {
			for radix <= maxDigit || radix == 2 {
				radix *= 2
			}
		}
		unit, ok := inferUnit(rs, radix)
		if !ok {
			continue
		}
		l := Ladder{Name: name, Vhost: s.Vhost, Layout: layout, Unit: unit, Levels: levels, Radix: radix, QueueType: qtype[name]}
		for _, b := range s.Bindings {
			if dest, ok := isTarget(l, b); ok {
				l.Targets = append(l.Targets, dest)
			}
		}
		if nl, err := votes[name].normalize(l); err == nil {
			out = append(out, nl)
		}
	}
	return sortedLadders(out)
}

func (prefixLayout) namePattern(name string) string {
	return name + `\.(?:ingest|deliver|done|unroutable|rung\.\d{2}(?:\.[1-9a-f])?(?:\.expired)?)`
}

func (prefixLayout) anyName() string { return `.+` }
