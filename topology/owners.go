package topology

import (
	"regexp"
	"sync"
)

// ownerPatterns match a name any layout's ladder may own, capturing the
// ladder's name where the layout spells it into its objects' names.
var ownerPatterns = sync.OnceValue(func() []ownerPattern {
	var out []ownerPattern
	for _, lay := range Layouts() {
		p := lay.namePattern("(" + lay.anyName() + ")")
		if p == "" {
			continue
		}
		re := regexp.MustCompile("^(?:" + p + ")$")
		op := ownerPattern{re: re}
		if nl, ok := lay.(nsbLayout); ok && re.NumSubexp() == 0 {
			// NServiceBus' objects have fixed names: the ladder is named
			// after them, as its Discover names it.
			op.fixed = nl.base()
		}
		out = append(out, op)
	}
	return out
})

type ownerPattern struct {
	re    *regexp.Regexp
	fixed string
}

// LadderNamesOwning lists the names of the ladders, of any layout, that
// may own one of names (a queue or an exchange), sorted and without
// duplicates: what an operation that names a queue reads, by name, to
// know whether the queue is a rung and of which ladder, instead of
// discovering every ladder of the vhost. A name no ladder may own adds
// nothing.
func LadderNamesOwning(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, op := range ownerPatterns() {
			m := op.re.FindStringSubmatch(n)
			switch {
			case m == nil:
			case op.fixed != "":
				out = append(out, op.fixed)
			default:
				for _, g := range m[1:] {
					if g != "" {
						out = append(out, g)
						break
					}
				}
			}
		}
	}
	return uniqueSorted(out)
}
