package topology

import (
	"regexp"
	"sync"
)

// ownerPattern tells, for one layout, which ladder names may own a name.
type ownerPattern struct {
	// rest matches what the layout appends to a ladder's name; any, the
	// names its ladders may have.
	rest, any *regexp.Regexp
	// whole and fixed: a layout whose objects have fixed names (NServiceBus)
	// names its one ladder fixed.
	whole *regexp.Regexp
	fixed string
}

var ownerPatterns = sync.OnceValue(func() []ownerPattern {
	var out []ownerPattern
	for _, lay := range Layouts() {
		if nl, ok := lay.(nsbLayout); ok {
			out = append(out, ownerPattern{whole: regexp.MustCompile("^(?:" + nl.namePattern("") + ")$"), fixed: nl.base()})
			continue
		}
		if lay.namePattern("") == "" {
			continue
		}
		out = append(out, ownerPattern{
			rest: regexp.MustCompile("^(?:" + lay.namePattern("") + ")$"),
			any:  regexp.MustCompile("^(?:" + lay.anyName() + ")$"),
		})
	}
	return out
})

// LadderNamesOwning lists the names of the ladders, of any layout, that
// may own one of names (a queue or an exchange), sorted and without
// duplicates: what an operation that names a queue reads, by name, to
// know whether the queue is a rung and of which ladder, instead of
// discovering every ladder of the vhost. A name can have several (the
// suffix layout's jobs.delay.1.done is ladder jobs' or ladder
// jobs.delay.1's); a name no ladder may own adds none.
func LadderNamesOwning(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, op := range ownerPatterns() {
			if op.whole != nil {
				if op.whole.MatchString(n) {
					out = append(out, op.fixed)
				}
				continue
			}
			// Every split of n into a ladder's name and what the layout
			// appends to it.
			for i := 1; i < len(n); i++ {
				if op.rest.MatchString(n[i:]) && op.any.MatchString(n[:i]) {
					out = append(out, n[:i])
				}
			}
		}
	}
	return uniqueSorted(out)
}
