package topology

import (
	"fmt"
	"strings"
)

// CheckRoute walks a traced message over the graph's bindings, as the
// broker would route it, and says where the broker disagrees with the
// ladder: no route at all, a rung whose TTL differs from the plan, or a
// different path. nil means the broker delivers it exactly as traced.
// rungs publish, rungs trace and the console's publish and replay forms
// all check with it, so that none of them publishes a message into the
// unroutable queue (or into the wrong delay) unawares.
func (g *Graph) CheckRoute(tr Trace) error {
	steps, err := g.Walk(tr.Exchange, tr.Key, tr.BCC...)
	if err != nil {
		return err
	}
	want := make([]string, 0, len(tr.Hops)+1)
	for _, h := range tr.Hops {
		want = append(want, h.Queue)
	}
	want = append(want, tr.Target)
	got := make([]string, 0, len(steps))
	for i, s := range steps {
		got = append(got, s.Queue)
		// A different queue is a different path, said below in full.
		if i < len(tr.Hops) && s.Queue == tr.Hops[i].Queue && s.TTL != tr.Hops[i].TTL {
			return fmt.Errorf("rung %s has TTL %s on the broker, the ladder expects %s", s.Queue, FormatDelay(s.TTL), FormatDelay(tr.Hops[i].TTL))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("the broker routes it %s, the ladder expects %s", strings.Join(got, " → "), strings.Join(want, " → "))
	}
	return nil
}
