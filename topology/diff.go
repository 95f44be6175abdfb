package topology

import (
	"fmt"
	"reflect"
	"sort"
)

// DriftKind says how the broker differs from the plan.
type DriftKind string

// Kinds of drift.
const (
	Missing   DriftKind = "missing"   // in the plan, not on the broker
	Extra     DriftKind = "extra"     // on the broker, named like the ladder, not in the plan
	Different DriftKind = "different" // on both, declared differently
)

// Drift is one difference between a plan and a broker.
type Drift struct {
	Kind   DriftKind
	Object string // "exchange", "queue" or "binding"
	Name   string // object name or binding ID
	Detail string // for Different: what differs
}

func (d Drift) String() string {
	s := fmt.Sprintf("%s %s %s", d.Kind, d.Object, d.Name)
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	return s
}

// Diff compares a ladder's plan with what a broker holds. Objects of other
// ladders and applications are ignored; objects named like this ladder's but
// not in its plan are Extra. Bindings that attach a destination queue are
// not drift. The result is sorted and empty when the broker matches.
func Diff(p Plan, s Snapshot) []Drift {
	lay := p.Ladder.layout()
	var out []Drift
	add := func(k DriftKind, obj, name, detail string) {
		out = append(out, Drift{Kind: k, Object: obj, Name: name, Detail: detail})
	}

	planX := map[string]bool{}
	for _, want := range p.Exchanges {
		planX[want.Name] = true
		got, ok := s.Exchange(want.Name)
		if !ok {
			add(Missing, "exchange", want.Name, "")
			continue
		}
		if got.Type != want.Type {
			add(Different, "exchange", want.Name, fmt.Sprintf("type is %s, plan has %s", got.Type, want.Type))
		}
		if got.Durable != want.Durable {
			add(Different, "exchange", want.Name, fmt.Sprintf("durable is %v, plan has %v", got.Durable, want.Durable))
		}
		if got.AutoDelete != want.AutoDelete {
			add(Different, "exchange", want.Name, fmt.Sprintf("auto-delete is %v, plan has %v", got.AutoDelete, want.AutoDelete))
		}
		for _, d := range ArgsDiff(want.Args, got.Args) {
			add(Different, "exchange", want.Name, d)
		}
	}
	planQ := map[string]bool{}
	for _, want := range p.Queues {
		planQ[want.Name] = true
		got, ok := s.Queue(want.Name)
		if !ok {
			add(Missing, "queue", want.Name, "")
			continue
		}
		if got.Durable != want.Durable {
			add(Different, "queue", want.Name, fmt.Sprintf("durable is %v, plan has %v", got.Durable, want.Durable))
		}
		if got.AutoDelete != want.AutoDelete {
			add(Different, "queue", want.Name, fmt.Sprintf("auto-delete is %v, plan has %v", got.AutoDelete, want.AutoDelete))
		}
		for _, d := range ArgsDiff(WithLegacyArgs(want.Args, got.Args), got.Args) {
			add(Different, "queue", want.Name, d)
		}
	}
	for _, x := range s.Exchanges {
		if !planX[x.Name] && lay.Owns(p.Ladder, x.Name) {
			add(Extra, "exchange", x.Name, "")
		}
	}
	for _, q := range s.Queues {
		if !planQ[q.Name] && lay.Owns(p.Ladder, q.Name) {
			add(Extra, "queue", q.Name, "")
		}
	}

	planB := map[string]bool{}
	gotB := map[string]bool{}
	// A destination is attached to an exchange when any binding the layout
	// accepts for it from that exchange exists: NServiceBus endpoints bind
	// their queue or their exchange, depending on the routing topology, and
	// either one delivers. A direct ladder binds a destination from every
	// level's exchange, and each one is needed.
	gotTarget := map[[2]string]bool{}
	for _, b := range s.Bindings {
		gotB[b.ID()] = true
		if dest, ok := lay.IsTargetBinding(p.Ladder, b); ok {
			gotTarget[[2]string{b.Source, dest}] = true
		}
	}
	for _, b := range p.Bindings {
		planB[b.ID()] = true
		if gotB[b.ID()] {
			continue
		}
		if dest, ok := lay.IsTargetBinding(p.Ladder, b); ok && gotTarget[[2]string{b.Source, dest}] {
			continue
		}
		add(Missing, "binding", b.ID(), "")
	}
	for _, b := range s.Bindings {
		if b.Source == "" || planB[b.ID()] {
			continue // "" is the default exchange's implicit binding to every queue
		}
		ours := planX[b.Source] || (b.DestinationType == ToQueue && planQ[b.Destination]) || (b.DestinationType == ToExchange && planX[b.Destination])
		if !ours {
			continue
		}
		if _, isTarget := lay.IsTargetBinding(p.Ladder, b); isTarget {
			continue
		}
		add(Extra, "binding", b.ID(), "")
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Detail < b.Detail
	})
	return out
}

// ArgsDiff lists how got's arguments differ from want's, one line each, in
// key order. A classic queue's explicit x-queue-type equals its absence.
func ArgsDiff(want, got Args) []string {
	w, g := want.Normalized(), got.Normalized()
	if w["x-queue-type"] == nil && g["x-queue-type"] == string(Classic) {
		delete(g, "x-queue-type")
	}
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		wv, wok := w[k]
		gv, gok := g[k]
		switch {
		case !gok:
			out = append(out, fmt.Sprintf("argument %s is missing (plan has %v)", k, wv))
		case !wok:
			out = append(out, fmt.Sprintf("argument %s=%v is not in the plan", k, gv))
		case !reflect.DeepEqual(wv, gv):
			out = append(out, fmt.Sprintf("argument %s is %v, plan has %v", k, gv, wv))
		}
	}
	return out
}
