package retry

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawPolicy draws a valid policy of either kind.
func drawPolicy(t *rapid.T) Policy {
	p := Policy{
		MaxAttempts: rapid.IntRange(1, 40).Draw(t, "attempts"),
		Jitter:      rapid.SampledFrom([]float64{0, 0.1, 0.5, 1}).Draw(t, "jitter"),
	}
	if rapid.Bool().Draw(t, "steps") {
		p.Steps = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) time.Duration {
			return time.Duration(rapid.Int64Range(0, int64(24*time.Hour)).Draw(t, "step"))
		}), 1, 8).Draw(t, "steps")
		return p
	}
	p.Initial = time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "initial"))
	p.Multiplier = rapid.SampledFrom([]float64{0, 1, 1.5, 2, 3, 10}).Draw(t, "mult")
	if rapid.Bool().Draw(t, "capped") {
		p.Max = p.Initial + time.Duration(rapid.Int64Range(0, int64(48*time.Hour)).Draw(t, "max"))
	}
	return p
}

func TestPolicyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPolicy(t)
		if err := p.Validate(); err != nil {
			t.Fatalf("drawn policy invalid: %v", err)
		}
		longest := p.Longest()
		prev := time.Duration(0)
		for n := 1; n < p.MaxAttempts; n++ {
			base := p.Base(n)
			u := rapid.Float64Range(0, 1).Draw(t, "u")
			d := p.Delay(n, u)
			// Never early: jitter only lengthens.
			if d < base {
				t.Fatalf("Delay(%d, %v) = %s < Base %s", n, u, d, base)
			}
			if limit := float64(base) * (1 + p.Jitter); float64(d) > limit {
				t.Fatalf("Delay(%d, %v) = %s beyond %s·(1+%v)", n, u, d, base, p.Jitter)
			}
			if d > longest {
				t.Fatalf("Delay(%d) = %s > Longest %s", n, d, longest)
			}
			if p.Max > 0 && len(p.Steps) == 0 && base > p.Max {
				t.Fatalf("Base(%d) = %s above Max %s", n, base, p.Max)
			}
			if len(p.Steps) == 0 && base < prev {
				t.Fatalf("exponential Base shrank: %s after %s", base, prev)
			}
			if len(p.Steps) > 0 && base != p.Steps[min(n, len(p.Steps))-1] {
				t.Fatalf("Base(%d) = %s, not its step", n, base)
			}
			prev = base
		}
		if p.MaxAttempts == 1 && longest != 0 {
			t.Fatalf("one attempt never waits, Longest = %s", longest)
		}
	})
}

func TestPolicyExamples(t *testing.T) {
	exp := Policy{Initial: time.Second, Max: 10 * time.Second, MaxAttempts: 6}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := exp.Base(i + 1); got != w {
			t.Errorf("Base(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := exp.Longest(); got != 10*time.Second {
		t.Errorf("Longest() = %s", got)
	}
	exp.Jitter = 0.5
	if got := exp.Delay(1, 0.5); got != 1250*time.Millisecond {
		t.Errorf("Delay(1, 0.5) = %s, want 1.25s", got)
	}
	steps := Policy{Steps: []time.Duration{time.Second, time.Minute}, MaxAttempts: 9}
	if steps.Base(1) != time.Second || steps.Base(2) != time.Minute || steps.Base(8) != time.Minute || steps.Longest() != time.Minute {
		t.Errorf("steps: %s %s %s", steps.Base(1), steps.Base(2), steps.Base(8))
	}
	// Without a cap, the last retry's delay bounds everything.
	huge := Policy{Initial: time.Hour, Multiplier: 10, MaxAttempts: 1 << 30}
	if huge.Longest() != time.Duration(1<<63-1) {
		t.Errorf("uncapped Longest() = %s, want the largest duration", huge.Longest())
	}
}

func TestPolicyValidate(t *testing.T) {
	bad := map[string]Policy{
		"no attempts":     {Initial: time.Second},
		"no delay":        {MaxAttempts: 3},
		"shrinking":       {Initial: time.Second, Multiplier: 0.5, MaxAttempts: 3},
		"jitter above 1":  {Initial: time.Second, Jitter: 1.5, MaxAttempts: 3},
		"negative jitter": {Initial: time.Second, Jitter: -0.1, MaxAttempts: 3},
		"max below":       {Initial: time.Minute, Max: time.Second, MaxAttempts: 3},
		"negative step":   {Steps: []time.Duration{time.Second, -time.Second}, MaxAttempts: 3},
	}
	for name, p := range bad {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); !errors.Is(err, ErrBadPolicy) {
				t.Errorf("Validate() = %v, want ErrBadPolicy", err)
			}
		})
	}
}
