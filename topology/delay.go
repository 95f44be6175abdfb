package topology

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ErrBadDelay is returned for text that is not a delay.
var ErrBadDelay = errors.New("invalid delay")

// delayUnits are the suffixes ParseDelay accepts, longest first so that "ms"
// is tried before "m".
var delayUnits = []struct {
	suffix string
	d      time.Duration
}{
	{"ms", time.Millisecond},
	{"us", time.Microsecond},
	{"µs", time.Microsecond},
	{"ns", time.Nanosecond},
	{"w", 7 * 24 * time.Hour},
	{"d", 24 * time.Hour},
	{"h", time.Hour},
	{"m", time.Minute},
	{"s", time.Second},
}

// ParseDelay reads a delay such as "1500ms", "90s", "1h30m", "7d" or "1.5h".
// A bare number is refused rather than guessed at: "15" could mean seconds or
// milliseconds, and guessing wrong delivers a message far too early or late.
func ParseDelay(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("%w: empty (try 90s, 1500ms, 1h30m or 7d)", ErrBadDelay)
	}
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("%w: %q", ErrNegativeDelay, s)
	}
	in = strings.TrimPrefix(in, "+")
	if in == "0" {
		return 0, nil
	}
	total := new(big.Int)
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%w: %q (expected a number at %q)", ErrBadDelay, s, rest)
		}
		num := rest[:i]
		rest = rest[i:]
		if rest == "" {
			return 0, fmt.Errorf("%w: %q has no unit (add one of ms, s, m, h, d, w)", ErrBadDelay, s)
		}
		var unit time.Duration
		for _, u := range delayUnits {
			if strings.HasPrefix(rest, u.suffix) {
				unit = u.d
				rest = rest[len(u.suffix):]
				break
			}
		}
		if unit == 0 {
			return 0, fmt.Errorf("%w: %q (unknown unit at %q; use ms, s, m, h, d or w)", ErrBadDelay, s, rest)
		}
		ns, ok := exactNanos(num, unit)
		if !ok {
			return 0, fmt.Errorf("%w: %q (bad number %q)", ErrBadDelay, s, num)
		}
		total.Add(total, ns)
		if !total.IsInt64() {
			return 0, fmt.Errorf("%w: %q is too long", ErrBadDelay, s)
		}
	}
	return time.Duration(total.Int64()), nil
}

// exactNanos converts a decimal number of units to nanoseconds without
// floating point, rounding a fraction of a nanosecond up (never early).
func exactNanos(num string, unit time.Duration) (*big.Int, bool) {
	whole, frac, hasDot := strings.Cut(num, ".")
	if strings.Contains(frac, ".") || whole == "" && frac == "" || hasDot && frac == "" {
		return nil, false
	}
	digits, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return nil, false
	}
	n := digits.Mul(digits, big.NewInt(int64(unit)))
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	q, r := new(big.Int).QuoRem(n, scale, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q, true
}

// FormatDelay prints a delay compactly and exactly: 250ms, 1.5s, 1m30s,
// 1h30m, 7d, 3d0h0m5s. Days are used above 24h because time.Duration's String does not.
func FormatDelay(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d < time.Second {
		if d%time.Millisecond == 0 {
			return sign + strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
		}
		return sign + d.String()
	}
	var b strings.Builder
	b.WriteString(sign)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	if days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "d")
	}
	parts := []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	for _, p := range parts {
		if d == 0 {
			break
		}
		n := d / p.unit
		d -= n * p.unit
		if p.name == "s" && d != 0 {
			// Fractional seconds, exactly: nine decimals, trailing zeros cut.
			frac := strings.TrimRight(fmt.Sprintf("%09d", int64(d)), "0")
			b.WriteString(strconv.FormatInt(int64(n), 10) + "." + frac + "s")
			d = 0
			break
		}
		if n > 0 || b.Len() > len(sign) {
			b.WriteString(strconv.FormatInt(int64(n), 10) + p.name)
		}
	}
	return b.String()
}
