package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// celeryLayout is Celery's native delayed delivery for RabbitMQ (kombu 5.5
// and later, kombu.transport.native_delayed_delivery), as kombu's public
// source declares it:
//
//	[PREFIX_]celery_delayed_27 .. _0   a topic exchange and a queue per level
//	[PREFIX_]celery_delayed_delivery   topic exchange where delays end
//
// Level n's queue has x-message-ttl 2^n·1000, x-overflow reject-publish,
// x-queue-type classic or quorum (at-least-once dead-lettering when quorum)
// and dead-letters into level n-1's exchange, level 0's into the delivery
// exchange. Level n's exchange binds its queue on a 1 in the level's
// position (27-n stars, then "1.#") and level n-1's exchange on a 0 ("0.#");
// level 0's zero binding leads to the delivery exchange. Level names are not
// zero-padded.
//
// Celery always publishes to level 27 with a key of 28 binary digits (whole
// seconds) followed by the task's routing key. A worker attaches each of its
// queues by binding its queue's exchange to the delivery exchange, and the
// queue to that exchange, both with "#.<routing key>"; direct exchanges are
// skipped (Celery needs a topic exchange for this). rungs models Celery's
// default wiring, where a queue, its exchange and its routing key share one
// name (Celery's own "celery" queue, and every queue it creates on demand):
// a target is that name. The ladder's name is the prefix plus "celery", so
// that every object is NAME_delayed_...: "celery", or "billing_celery" for
// the prefix "billing".
//
// One property of Celery's bindings: "#.<routing key>" matches every key
// ending in those words, so two queues whose routing keys are dotted
// suffixes of each other ("retry" and "orders.retry") both receive a delayed
// message for the longer one. rungs reports such a route as ambiguous
// instead of pretending it is not.
type celeryLayout struct{}

const (
	celeryName   = "celery"
	celeryLevels = 28
)

func (celeryLayout) Name() string { return "celery" }
func (celeryLayout) Describe() string {
	return "Celery native delayed delivery (kombu): [PREFIX_]celery_delayed_0..27, 1s unit, routing key required"
}

func (celeryLayout) normalize(l Ladder) (Ladder, error) {
	if l.Name == DefaultName {
		l.Name = celeryName
	}
	if l.Name != celeryName && (!strings.HasSuffix(l.Name, "_"+celeryName) || len(l.Name) == len(celeryName)+1) {
		return l, fmt.Errorf("%w: a Celery ladder is named celery or PREFIX_celery (its objects are NAME_delayed_N), not %q", ErrInvalidLadder, l.Name)
	}
	if l.Unit != time.Second || l.Levels != celeryLevels || l.Radix != 2 {
		return l, fmt.Errorf("%w: the celery layout has 28 binary levels of 1s", ErrInvalidLadder)
	}
	return l, nil
}

func (celeryLayout) level(l Ladder, n int) string { return l.Name + "_delayed_" + strconv.Itoa(n) }
func (celeryLayout) delivery(l Ladder) string     { return l.Name + "_delayed_delivery" }

// below is where level n's queue and zero binding lead.
func (c celeryLayout) below(l Ladder, n int) string {
	if n == 0 {
		return c.delivery(l)
	}
	return c.level(l, n-1)
}

func (c celeryLayout) Rungs(l Ladder) []Rung {
	var rs []Rung
	for n := l.Levels - 1; n >= 0; n-- {
		rs = append(rs, Rung{Level: n, Digit: 1, Queue: c.level(l, n), TTL: l.RungTTL(n, 1), DeadLetter: c.below(l, n)})
	}
	return rs
}

func (celeryLayout) Terminals(Ladder) []Terminal { return nil }

func (c celeryLayout) Plan(l Ladder) Plan {
	plan := Plan{Ladder: l}
	for n := l.Levels - 1; n >= 0; n-- {
		plan.Exchanges = append(plan.Exchanges, Exchange{Name: c.level(l, n), Type: "topic", Durable: true})
	}
	plan.Exchanges = append(plan.Exchanges, Exchange{Name: c.delivery(l), Type: "topic", Durable: true})
	for _, r := range c.Rungs(l) {
		// Celery sets x-queue-type and reject-publish for both queue
		// types; at-least-once only where it exists (quorum).
		a := Args{
			"x-queue-type":           string(l.QueueType),
			"x-overflow":             "reject-publish",
			"x-message-ttl":          ttlMillis(r.TTL),
			"x-dead-letter-exchange": r.DeadLetter,
		}
		if l.QueueType == Quorum {
			a["x-dead-letter-strategy"] = "at-least-once"
		}
		plan.Queues = append(plan.Queues, Queue{Name: r.Queue, Durable: true, Args: a})
	}
	bind := func(src, dst, dtype, key string) {
		plan.Bindings = append(plan.Bindings, Binding{Source: src, Destination: dst, DestinationType: dtype, RoutingKey: key})
	}
	for n := l.Levels - 1; n >= 0; n-- {
		bind(c.level(l, n), c.level(l, n), ToQueue, pattern(repeat("*", l.Levels-1-n), []string{"1", "#"}))
	}
	for n := l.Levels - 1; n >= 0; n-- {
		bind(c.level(l, n), c.below(l, n), ToExchange, pattern(repeat("*", l.Levels-1-n), []string{"0", "#"}))
	}
	for _, t := range l.Targets {
		bind(c.delivery(l), t, ToExchange, "#."+t)
		bind(t, t, ToQueue, "#."+t)
	}
	return plan
}

// Entry is always the top level: Celery publishes every delay there and
// lets the zero bindings pass it down.
func (c celeryLayout) Entry(l Ladder, _ uint64) string { return c.level(l, l.Levels-1) }

func (celeryLayout) Key(l Ladder, units uint64, dest string) (string, error) {
	if dest == "" {
		return "", fmt.Errorf("%w: a Celery delay needs the task's routing key (--to)", ErrBadDest)
	}
	return joinKey(digitKey(l, units), dest)
}

// Decode reads the delay from the key's first prefix and the routing key
// from what follows the last one: a key with stacked prefixes (see
// CeleryStacked) still routes by its first 28 digits, and "#.<routing
// key>" still matches it.
func (celeryLayout) Decode(l Ladder, key string) (uint64, string, error) {
	u, dest, err := decodeFixed(l, key)
	if err != nil {
		return u, dest, err
	}
	_, dest = CeleryStacked(dest, l.Levels)
	if dest == "" {
		return 0, "", fmt.Errorf("%w: %q has no routing key after its delay digits", ErrBadKey, key)
	}
	return u, dest, nil
}

// CeleryStacked peels the whole delay prefixes (levels binary digits each)
// that lead rest, the part of a Celery key after its first prefix: it
// returns how many there were and the routing key left. kombu before the
// fix for celery/kombu#2556 prepended a new prefix to the key a retried
// task came back with, so each delayed retry made the key levels·2 bytes
// longer, until past AMQP's 255 bytes the retry could not be published. A
// routing key that only starts like one (fewer than levels digits) is
// left alone, as kombu's fix does.
func CeleryStacked(rest string, levels int) (stacked int, routingKey string) {
	for {
		words := splitWords(rest)
		if len(words) <= levels {
			return stacked, rest
		}
		if _, ok := readDigits(words[:levels], 2); !ok {
			return stacked, rest
		}
		stacked++
		rest = strings.Join(words[levels:], ".")
	}
}

// KeyStack reads a Celery key's stacked delay prefixes (CeleryStacked) and,
// when it has any, how many more delayed retries it survives
// (CeleryRetriesLeft); 0, 0 for a key of any other layout.
func (l Ladder) KeyStack(key string) (stacked, retriesLeft int) {
	if l.Layout != "celery" {
		return 0, 0
	}
	words := strings.SplitN(key, ".", l.Levels+1)
	if len(words) <= l.Levels {
		return 0, 0
	}
	if stacked, _ = CeleryStacked(words[l.Levels], l.Levels); stacked == 0 {
		return 0, 0
	}
	return stacked, CeleryRetriesLeft(len(key), l.Levels)
}

// CeleryRetriesLeft is how many more delayed retries a key of keyBytes
// bytes survives on a kombu that stacks prefixes, each adding levels·2
// bytes, before it passes AMQP's 255.
func CeleryRetriesLeft(keyBytes, levels int) int {
	return max(MaxKeyBytes-keyBytes, 0) / (2 * levels)
}

func (celeryLayout) Target(_ Ladder, dest string) (string, error) {
	if dest == "" {
		return "", fmt.Errorf("%w: a Celery delay needs the task's routing key", ErrBadDest)
	}
	return dest, checkDest(dest)
}

func (c celeryLayout) Owns(l Ladder, name string) bool {
	if name == c.delivery(l) {
		return true
	}
	m := celeryLevel.FindStringSubmatch(name)
	return m != nil && m[1]+celeryName == l.Name
}

// IsTargetBinding recognises a worker's queue exchange bound to the
// delivery exchange, in Celery's default wiring (exchange named like the
// routing key).
func (c celeryLayout) IsTargetBinding(l Ladder, b Binding) (string, bool) {
	if b.Source != c.delivery(l) || b.DestinationType != ToExchange || b.RoutingKey != "#."+b.Destination || checkDest(b.Destination) != nil {
		return "", false
	}
	return b.Destination, true
}

// celeryLevel matches level queues and exchanges; group 1 is the prefix
// with its underscore ("" without one).
var celeryLevel = regexp.MustCompile(`^(.*_)?celery_delayed_(\d{1,2})$`)

func (c celeryLayout) Discover(s Snapshot) []Ladder {
	found := map[string]int{}
	qtype := map[string]QueueType{}
	lowest := map[string]int{}
	for _, q := range s.Queues {
		m := celeryLevel.FindStringSubmatch(q.Name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if n >= celeryLevels || strconv.Itoa(n) != m[2] {
			continue
		}
		if _, ok := q.TTL(); !ok {
			continue
		}
		name := m[1] + celeryName
		if _, seen := qtype[name]; !seen || n < lowest[name] {
			qtype[name], lowest[name] = q.QueueType(), n
		}
		found[name]++
	}
	var out []Ladder
	for name := range found {
		l := Ladder{Name: name, Vhost: s.Vhost, Layout: c.Name(), Unit: time.Second, Levels: celeryLevels, Radix: 2, QueueType: qtype[name]}
		for _, b := range s.Bindings {
			if dest, ok := c.IsTargetBinding(l, b); ok {
				l.Targets = append(l.Targets, dest)
			}
		}
		if nl, err := l.Normalize(); err == nil {
			out = append(out, nl)
		}
	}
	return sortedLadders(out)
}

func (celeryLayout) namePattern(name string) string {
	return name + `_delayed_(?:delivery|\d{1,2})`
}

func (celeryLayout) anyName() string { return `(?:.+_)?` + celeryName }
