package retry

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// DefaultMultiplier is the growth of an exponential policy that sets none.
const DefaultMultiplier = 2

// ErrBadPolicy is returned for a policy that cannot be followed.
var ErrBadPolicy = errors.New("invalid retry policy")

// Policy says how long a failed job waits before each retry and how many
// times it is tried before it is parked.
//
// Delays are either a list (Steps) or exponential: Initial after the first
// failure, multiplied by Multiplier after each further one, capped at Max.
// Jitter then lengthens each delay by a random share of up to Jitter, never
// shortens it, so a job is never retried sooner than the policy says, while
// jobs that failed together do not all come back together. The ladder
// rounds the result up to its unit, so it is never early either.
type Policy struct {
	// Steps are the delays after the first, second, ... failure; failures
	// beyond the list reuse its last step. When set, Initial, Multiplier
	// and Max are ignored.
	Steps []time.Duration
	// Initial is the delay after the first failure.
	Initial time.Duration
	// Multiplier is the growth per failure, at least 1; 0 means 2.
	Multiplier float64
	// Max caps the exponential delay before jitter; 0 means no cap other
	// than the ladder's longest delay.
	Max time.Duration
	// Jitter, between 0 and 1, spreads a delay d over [d, d·(1+Jitter)).
	Jitter float64
	// MaxAttempts is how many times a job is tried in all, the first try
	// included. The failure of the last attempt parks the job.
	MaxAttempts int
}

// Validate reports a policy that cannot be followed.
func (p Policy) Validate() error {
	switch {
	case p.MaxAttempts < 1:
		return fmt.Errorf("%w: MaxAttempts is %d; a job is tried at least once", ErrBadPolicy, p.MaxAttempts)
	case p.Jitter < 0 || p.Jitter > 1 || math.IsNaN(p.Jitter):
		return fmt.Errorf("%w: Jitter %v is not between 0 and 1", ErrBadPolicy, p.Jitter)
	}
	if len(p.Steps) > 0 {
		for i, s := range p.Steps {
			if s < 0 {
				return fmt.Errorf("%w: step %d is negative (%s)", ErrBadPolicy, i+1, s)
			}
		}
		return nil
	}
	switch {
	case p.Initial <= 0:
		return fmt.Errorf("%w: Initial must be positive (or give Steps)", ErrBadPolicy)
	case p.Multiplier != 0 && (p.Multiplier < 1 || math.IsInf(p.Multiplier, 0) || math.IsNaN(p.Multiplier)):
		return fmt.Errorf("%w: Multiplier %v must be at least 1", ErrBadPolicy, p.Multiplier)
	case p.Max < 0:
		return fmt.Errorf("%w: Max is negative", ErrBadPolicy)
	case p.Max > 0 && p.Max < p.Initial:
		return fmt.Errorf("%w: Max %s is below Initial %s", ErrBadPolicy, topology.FormatDelay(p.Max), topology.FormatDelay(p.Initial))
	}
	return nil
}

// Base is the delay after the n-th failure (n ≥ 1), before jitter.
func (p Policy) Base(n int) time.Duration {
	n = max(n, 1)
	if len(p.Steps) > 0 {
		return p.Steps[min(n, len(p.Steps))-1]
	}
	m := p.Multiplier
	if m == 0 {
		m = DefaultMultiplier
	}
	ceiling := time.Duration(math.MaxInt64)
	if p.Max > 0 {
		ceiling = p.Max
	}
	d := float64(p.Initial) * math.Pow(m, float64(n-1))
	if d >= float64(ceiling) || math.IsInf(d, 0) || math.IsNaN(d) {
		return ceiling
	}
	return time.Duration(d)
}

// Delay is the delay after the n-th failure with jitter: u, in [0, 1), is
// the random share (the Retrier draws it). It is never below Base(n).
func (p Policy) Delay(n int, u float64) time.Duration {
	return jitter(p.Base(n), p.Jitter, u)
}

func jitter(d time.Duration, j, u float64) time.Duration {
	if j == 0 || d == 0 {
		return d
	}
	u = math.Min(math.Max(u, 0), math.Nextafter(1, 0))
	extra := float64(d) * j * u
	if extra >= float64(math.MaxInt64-d) {
		return time.Duration(math.MaxInt64)
	}
	return d + time.Duration(extra)
}

// Longest is the longest delay the policy can ask for: the largest Base
// among the MaxAttempts-1 retries, with the whole jitter. A ladder must hold
// it.
func (p Policy) Longest() time.Duration {
	r := p.Retries()
	if r == 0 {
		return 0
	}
	var longest time.Duration
	if len(p.Steps) > 0 {
		for _, s := range p.Steps[:min(r, len(p.Steps))] {
			longest = max(longest, s)
		}
	} else {
		longest = p.Base(r) // exponential delays never shrink
	}
	return jitter(longest, p.Jitter, 1)
}

// Retries is how many times a job is republished before it is parked.
func (p Policy) Retries() int { return max(p.MaxAttempts-1, 0) }
