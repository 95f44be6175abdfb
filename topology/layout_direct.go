package topology

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// directLayout is the prefix ladder routed by hash lookups instead of topic
// matches. It has the same rungs, TTLs, names, routing key, done queue,
// destinations and unroutable queue as the prefix layout, but every
// exchange is a direct exchange and each message carries its whole path in
// its BCC header, one key per hop:
//
//	routing key  0.0.0.0.1.0.3.orders    (the prefix layout's key: delay and destination)
//	BCC          i>02.1  02>00.3  00>=orders
//
// A key is FROM ">" TO. FROM is the exchange that routes the hop: "i" for
// NAME.ingest, or the two-digit level LL of NAME.rung.LL.expired, the
// exchange a level-LL rung dead-letters into. TO is where the hop goes:
// the rung's suffix as in its queue name (LL.D, or LL in a radix-2
// ladder), or "=" then the destination queue ("=" alone is NAME.done).
// FROM never contains ">", so the first ">" splits a key unambiguously,
// and "=" tells a destination from a rung even when the destination is
// named like one. The routing key is never bound: it has no ">" before
// its first ".".
//
// Each exchange binds only the keys whose FROM is itself, so a message
// meets exactly one binding at every exchange. RabbitMQ keeps every
// routing key of a message, BCC included, when it dead-letters it, so each
// hop is one hash lookup per key rather than a walk of a topic trie; BCC,
// unlike CC, is stripped at publish and never copied into x-death. Peek,
// trace and migrate therefore rebuild the path from the routing key and
// the ladder's shape, as for the prefix layout.
//
// RabbitMQ 3.13.0 to 3.13.2 lost BCC keys on dead-lettering (fixed in
// 3.13.3): rungs doctor warns about those versions and rungs apply refuses
// to declare a direct ladder on them.
type directLayout struct{ prefixLayout }

// HeaderBCC is the AMQP header whose keys RabbitMQ routes a message by in
// addition to its routing key, and strips before storing it.
const HeaderBCC = "BCC"

func (directLayout) Name() string { return "direct" }
func (directLayout) Describe() string {
	return "the prefix ladder on direct exchanges: each hop a hash lookup of a key the message carries in its BCC header"
}

// rungKey is the TO part of a key for a rung: its queue name's suffix.
func rungKey(l Ladder, level, digit int) string {
	if l.Radix == 2 {
		return fmt.Sprintf("%02d", level)
	}
	return fmt.Sprintf("%02d.%s", level, digitWord(digit))
}

// fromKey is the FROM part of a key: "i" for ingest, else the level.
func fromKey(level int, ingest bool) string {
	if ingest {
		return "i"
	}
	return fmt.Sprintf("%02d", level)
}

// deliverKey is a key that leaves the ladder for dest ("" is done).
func deliverKey(from, dest string) string { return from + ">=" + dest }

func (d directLayout) Plan(l Ladder) Plan {
	plan := d.objects(l, "direct", d.ingest(l))
	bind := func(src, dst, key string) {
		plan.Bindings = append(plan.Bindings, Binding{Source: src, Destination: dst, DestinationType: ToQueue, RoutingKey: key})
	}
	bind(d.unroutable(l), d.unroutable(l), "")
	// From an exchange above level `above` (Levels for ingest), a message
	// goes on to a rung of any lower level, or leaves the ladder.
	from := func(src string, above int) {
		f := fromKey(above, above == l.Levels)
		for level := above - 1; level >= 0; level-- {
			for dg := l.Radix - 1; dg >= 1; dg-- {
				bind(src, d.rungQueue(l, level, dg), f+">"+rungKey(l, level, dg))
			}
		}
		bind(src, d.done(l), deliverKey(f, ""))
		for _, t := range l.Targets {
			bind(src, t, deliverKey(f, t))
		}
	}
	from(d.ingest(l), l.Levels)
	for level := l.Levels - 1; level >= 0; level-- {
		from(d.expired(l, level), level)
	}
	return plan
}

// bcc is the BCC header of a message of units for dest: the key of every
// hop, then the key that delivers it.
func (directLayout) bcc(l Ladder, units uint64, dest string) ([]string, error) {
	from := fromKey(l.Levels, true)
	var keys []string
	for i, dg := range l.Digits(units) {
		if dg == 0 {
			continue
		}
		level := l.Levels - 1 - i
		keys = append(keys, from+">"+rungKey(l, level, dg))
		from = fromKey(level, false)
	}
	last := deliverKey(from, dest)
	if len(last) > MaxKeyBytes {
		return nil, fmt.Errorf("%w: the delivery key for destination %q is %d bytes", ErrKeyTooLong, dest, len(last))
	}
	return append(keys, last), nil
}

func (d directLayout) Owns(l Ladder, name string) bool {
	switch name {
	case d.ingest(l), d.done(l), d.unroutable(l):
		return true
	}
	m := prefixRung.FindStringSubmatch(name)
	return m != nil && m[1] == l.Name
}

// IsTargetBinding recognises a destination queue bound to one of the
// ladder's exchanges with that exchange's delivery key.
func (d directLayout) IsTargetBinding(l Ladder, b Binding) (string, bool) {
	if b.DestinationType != ToQueue {
		return "", false
	}
	from, dest, ok := strings.Cut(b.RoutingKey, ">=")
	if !ok || dest == "" || dest != b.Destination || checkDest(dest) != nil {
		return "", false
	}
	switch {
	case from == "i":
		return dest, b.Source == d.ingest(l)
	case len(from) == 2:
		level, err := strconv.Atoi(from)
		return dest, err == nil && level < l.Levels && b.Source == d.expired(l, level)
	}
	return "", false
}

func (d directLayout) Discover(s Snapshot) []Ladder {
	return discoverRungLadders(s, d.Name(), func(name string) bool { return isDirectLadder(s, name) }, d.IsTargetBinding)
}

// isDirectLadder tells the direct layout's objects from the prefix
// layout's, which have the same names: by the type of the ingest exchange,
// or when that is gone, of a level's exchange (and no NAME.deliver, which
// only the prefix layout has).
func isDirectLadder(s Snapshot, name string) bool {
	if x, ok := s.Exchange(name + ".ingest"); ok {
		return x.Type == "direct"
	}
	if _, ok := s.Exchange(name + ".deliver"); ok {
		return false
	}
	for _, x := range s.Exchanges {
		if m := prefixRung.FindStringSubmatch(x.Name); m != nil && m[1] == name && m[3] == "" && m[4] != "" && x.Type == "direct" {
			return true
		}
	}
	return false
}

// BCC is the BCC header a message of delay d for dest must carry, for
// layouts that route by it (nil for the others).
func (l Ladder) BCC(d time.Duration, dest string) ([]string, error) {
	u, err := l.Units(d)
	if err != nil {
		return nil, err
	}
	return l.bccUnits(u, dest)
}

func (l Ladder) bccUnits(units uint64, dest string) ([]string, error) {
	r, ok := l.layout().(interface {
		bcc(Ladder, uint64, string) ([]string, error)
	})
	if !ok {
		return nil, nil
	}
	return r.bcc(l, units, dest)
}

// KeyBCC rebuilds the BCC header for a routing key of the ladder: what a
// message resting with that key carried when it was published, and what
// it must carry again to be published anywhere on its path (each exchange
// only acts on its own keys). nil for layouts that do not route by BCC.
func (l Ladder) KeyBCC(key string) ([]string, error) {
	if _, ok := l.layout().(directLayout); !ok {
		return nil, nil
	}
	u, dest, err := l.layout().Decode(l, key)
	if err != nil {
		return nil, err
	}
	return l.bccUnits(u, dest)
}

// RestingPath rebuilds the path of a message found in a queue of one of
// the ladders, from the exchange that routed it there and its routing key:
// its whole trace, BCC keys included. A direct ladder's messages need it,
// since the broker strips the BCC header they were published with. ok is
// false when no ladder owns the exchange or the key is not that ladder's.
func RestingPath(ladders []Ladder, exchange, key string) (Trace, bool) {
	for _, l := range ladders {
		if !l.layout().Owns(l, exchange) {
			continue
		}
		d, dest, err := l.Decode(key)
		if err != nil {
			return Trace{}, false
		}
		tr, err := l.Trace(d, dest)
		return tr, err == nil
	}
	return Trace{}, false
}

// RoutesByBCC reports whether the ladder's messages must carry a BCC header.
func (l Ladder) RoutesByBCC() bool {
	_, ok := l.layout().(directLayout)
	return ok
}
