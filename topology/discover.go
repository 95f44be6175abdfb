package topology

import "sort"

// Found is a ladder discovered on a broker, with its drift from the plan its
// parameters imply.
type Found struct {
	Ladder Ladder
	Drift  []Drift
}

// Discover finds every ladder, of every layout, in a snapshot of one vhost.
// A ladder is recognised by its rung queues, so a damaged ladder (a missing
// binding, a deleted rung) is still found, and its damage is in Drift.
// Results are sorted by name, then layout.
func Discover(s Snapshot) []Found {
	var out []Found
	for _, lay := range Layouts() {
		for _, l := range lay.Discover(s) {
			out = append(out, Found{Ladder: l, Drift: Diff(l.Plan(), s)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Ladder, out[j].Ladder
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Layout < b.Layout
	})
	return out
}
