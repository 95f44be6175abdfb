package topology

import (
	"fmt"
	"time"
)

// Cost is what a ladder costs the broker: the objects it declares and the
// hops a delayed message takes through it. Every hop is one expiry, one
// dead-lettering and one routing decision on the broker, so MeanHops is the
// multiplier on the work a plain publish→consume costs.
type Cost struct {
	Exchanges int
	Queues    int // every queue of the plan: rungs and terminals
	Rungs     int // delay queues only
	Bindings  int
	// MeanHops is the expected number of rungs a uniformly random delay in
	// [0, MaxDelay] visits; MaxHops is the most any delay visits.
	MeanHops float64
	MaxHops  int
}

// Cost counts the ladder's plan and hops. It is pure arithmetic on the plan:
// nothing is read from a broker.
func (l Ladder) Cost() Cost {
	p := l.Plan()
	return Cost{
		Exchanges: len(p.Exchanges),
		Queues:    len(p.Queues),
		Rungs:     len(l.Rungs()),
		Bindings:  len(p.Bindings),
		MeanHops:  l.MeanHops(),
		MaxHops:   l.Levels,
	}
}

// WithRadix returns the ladder rebuilt in another radix with the fewest
// levels that still hold its maximum delay, so that the costs of radix
// choices can be compared for the same range. Layouts that are binary only
// (suffix, nsb) return an error for any radix but 2.
func (l Ladder) WithRadix(radix int) (Ladder, error) {
	if radix == l.Radix {
		return l, nil
	}
	levels, err := LevelsFor(l.MaxDelay(), l.Unit, radix)
	if err != nil {
		return l, err
	}
	out := l
	out.Radix, out.Levels = radix, levels
	out.Targets = append([]string(nil), l.Targets...)
	n, err := out.Normalize()
	if err != nil {
		return l, fmt.Errorf("radix %d: %w", radix, err)
	}
	return n, nil
}

// RadixCosts lists the cost of the ladder's range in every radix its layout
// allows (2, 4, 8, 16 for prefix; only 2 for the binary layouts), in radix
// order. It is what `rungs plan` and the console show to help choose one.
func (l Ladder) RadixCosts() []RadixCost {
	var out []RadixCost
	for _, r := range []int{2, 4, 8, 16} {
		alt, err := l.WithRadix(r)
		if err != nil {
			continue
		}
		out = append(out, RadixCost{Radix: r, Levels: alt.Levels, MaxDelay: alt.MaxDelay(), Cost: alt.Cost()})
	}
	return out
}

// RadixCost is one radix choice for a ladder's range.
type RadixCost struct {
	Radix  int
	Levels int
	// MaxDelay is at least the original ladder's; a coarser radix may
	// reach further with the same number of queues' worth of levels.
	MaxDelay time.Duration
	Cost     Cost
}
