package topology

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// MatchTopic reports whether a routing key matches a topic binding key, with
// RabbitMQ's semantics: words are separated by dots, "*" matches exactly one
// word and "#" matches zero or more words.
func MatchTopic(pattern, key string) bool {
	return matchWords(splitWords(pattern), splitWords(key))
}

// splitWords splits like RabbitMQ: the empty key has no words, "a..b" has an
// empty middle word.
func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// matchWords is an iterative matcher over word slices; it remembers the last
// "#" so that backtracking is linear per "#" instead of exponential.
func matchWords(p, k []string) bool {
	pi, ki := 0, 0
	star, mark := -1, 0
	for ki < len(k) {
		switch {
		case pi < len(p) && p[pi] == "#":
			star, mark = pi, ki
			pi++
		case pi < len(p) && (p[pi] == "*" || p[pi] == k[ki]):
			pi++
			ki++
		case star >= 0:
			pi = star + 1
			mark++
			ki = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == "#" {
		pi++
	}
	return pi == len(p)
}

// Graph indexes a snapshot for routing simulations.
type Graph struct {
	exchanges map[string]Exchange
	queues    map[string]Queue
	bindings  map[string][]Binding // by source exchange
}

// NewGraph indexes s.
func NewGraph(s Snapshot) *Graph {
	g := &Graph{
		exchanges: make(map[string]Exchange, len(s.Exchanges)),
		queues:    make(map[string]Queue, len(s.Queues)),
		bindings:  make(map[string][]Binding),
	}
	for _, x := range s.Exchanges {
		g.exchanges[x.Name] = x
	}
	for _, q := range s.Queues {
		g.queues[q.Name] = q
	}
	for _, b := range s.Bindings {
		g.bindings[b.Source] = append(g.bindings[b.Source], b)
	}
	return g
}

// ErrUnknownExchange is returned when a route starts at a missing exchange.
var ErrUnknownExchange = errors.New("unknown exchange")

// Route reports the queues that a publish to exchange ex with key rk reaches,
// following exchange-to-exchange bindings and alternate exchanges the way
// RabbitMQ does. The default exchange ("") routes to the queue named rk.
// The result is sorted and has no duplicates; via lists the exchanges crossed.
// bcc are further routing keys (the CC and BCC headers): RabbitMQ routes a
// message by each of its keys and delivers it once to the union.
func (g *Graph) Route(ex, rk string, bcc ...string) (queues []string, via []string, err error) {
	keys := append([]string{rk}, bcc...)
	if ex == "" {
		var qs []string
		for _, k := range keys {
			if _, ok := g.queues[k]; ok && !slices.Contains(qs, k) {
				qs = append(qs, k)
			}
		}
		sort.Strings(qs)
		return qs, nil, nil
	}
	if _, ok := g.exchanges[ex]; !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownExchange, ex)
	}
	seenQ := map[string]bool{}
	seenX := map[string]bool{}
	var walk func(x string)
	walk = func(x string) {
		if seenX[x] {
			return // exchange cycles are legal in RabbitMQ and routed once
		}
		seenX[x] = true
		via = append(via, x)
		xd, ok := g.exchanges[x]
		if !ok {
			return
		}
		matched := false
		for _, b := range g.bindings[x] {
			if !slices.ContainsFunc(keys, func(k string) bool { return bindingMatches(xd.Type, b.RoutingKey, k) }) {
				continue
			}
			matched = true
			if b.DestinationType == ToExchange {
				walk(b.Destination)
			} else if _, ok := g.queues[b.Destination]; ok {
				seenQ[b.Destination] = true
			}
		}
		if ae, ok := xd.Args["alternate-exchange"].(string); ok && !matched {
			walk(ae)
		}
	}
	walk(ex)
	for q := range seenQ {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	return queues, via, nil
}

func bindingMatches(exType, bindingKey, rk string) bool {
	switch exType {
	case "fanout":
		return true
	case "direct":
		return bindingKey == rk
	case "topic":
		return MatchTopic(bindingKey, rk)
	default: // headers and plugin types: not simulated
		return false
	}
}

// Step is one stop of a simulated message: the exchanges it crossed to reach
// a queue, that queue, and how long it stays there before dead-lettering.
type Step struct {
	Exchanges []string
	Queue     string
	TTL       time.Duration // 0 for the final queue
}

// ErrAmbiguousRoute is returned when a message would be copied to several
// queues: in a ladder that means it would be delivered more than once.
var ErrAmbiguousRoute = errors.New("route is ambiguous")

// ErrNoRoute is returned when a message reaches no queue: RabbitMQ would drop
// it (or return it to a mandatory publisher).
var ErrNoRoute = errors.New("no route")

// Walk simulates a message published to ex with key rk (and the keys of
// its BCC header): it follows the route to one queue, lets it expire there
// if the queue has a TTL and a dead-letter exchange, and repeats until the
// message rests in a queue without one. Dead-lettering keeps every key, as
// RabbitMQ does, unless the queue sets x-dead-letter-routing-key, which
// replaces them all.
func (g *Graph) Walk(ex, rk string, bcc ...string) ([]Step, error) {
	var steps []Step
	for hop := 0; ; hop++ {
		if hop > 1024 {
			return steps, fmt.Errorf("route of %q loops through dead-letter exchanges", rk)
		}
		qs, via, err := g.Route(ex, rk, bcc...)
		if err != nil {
			return steps, err
		}
		switch len(qs) {
		case 0:
			return steps, fmt.Errorf("%w for %q from exchange %q", ErrNoRoute, rk, ex)
		case 1:
		default:
			return steps, fmt.Errorf("%w: %q from exchange %q reaches %s", ErrAmbiguousRoute, rk, ex, strings.Join(qs, ", "))
		}
		q := g.queues[qs[0]]
		ttl, hasTTL := q.TTL()
		dlx, hasDLX := q.DeadLetterExchange()
		if !hasTTL || !hasDLX {
			steps = append(steps, Step{Exchanges: via, Queue: q.Name})
			return steps, nil
		}
		steps = append(steps, Step{Exchanges: via, Queue: q.Name, TTL: ttl})
		if k, ok := q.Args["x-dead-letter-routing-key"].(string); ok {
			rk, bcc = k, nil
		}
		ex = dlx
	}
}
