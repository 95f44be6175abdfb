package topology

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestParseDelay(t *testing.T) {
	good := map[string]time.Duration{
		"1500ms":  1500 * time.Millisecond,
		"90s":     90 * time.Second,
		"1h30m":   90 * time.Minute,
		"7d":      7 * 24 * time.Hour,
		"2w":      14 * 24 * time.Hour,
		"1.5h":    90 * time.Minute,
		"0":       0,
		"0s":      0,
		" 10s ":   10 * time.Second,
		"1d12h":   36 * time.Hour,
		"250us":   250 * time.Microsecond,
		"+3m":     3 * time.Minute,
		"1m0.5s":  60500 * time.Millisecond,
		"100ns":   100,
		"0.001ms": 1000,
	}
	for in, want := range good {
		t.Run(in, func(t *testing.T) {
			got, err := ParseDelay(in)
			if err != nil || got != want {
				t.Fatalf("ParseDelay(%q) = %v, %v; want %v", in, got, err, want)
			}
		})
	}
	bad := map[string]error{
		"":                  ErrBadDelay,
		"15":                ErrBadDelay,
		"-5s":               ErrNegativeDelay,
		"5 s":               ErrBadDelay,
		"5x":                ErrBadDelay,
		"s":                 ErrBadDelay,
		"1..2s":             ErrBadDelay,
		"1e3s":              ErrBadDelay,
		"9999999999999999d": ErrBadDelay,
		"ten s":             ErrBadDelay,
	}
	for in, want := range bad {
		t.Run("bad/"+in, func(t *testing.T) {
			_, err := ParseDelay(in)
			if !errors.Is(err, want) {
				t.Fatalf("ParseDelay(%q) error = %v; want %v", in, err, want)
			}
		})
	}
}

func TestFormatDelay(t *testing.T) {
	cases := map[time.Duration]string{
		0:                              "0s",
		1500 * time.Millisecond:        "1.5s",
		90 * time.Second:               "1m30s",
		90 * time.Minute:               "1h30m",
		7 * 24 * time.Hour:             "7d",
		3*24*time.Hour + 5*time.Second: "3d0h0m5s",
		time.Millisecond:               "1ms",
		-2 * time.Second:               "-2s",
	}
	for d, want := range cases {
		if got := FormatDelay(d); got != want {
			t.Errorf("FormatDelay(%d) = %q; want %q", d, got, want)
		}
	}
}

// Every formatted delay parses back to itself, so what rungs prints can be
// pasted into a flag.
func TestFormatParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms := rapid.Int64Range(0, int64(100*365*24*time.Hour/time.Millisecond)).Draw(t, "ms")
		d := time.Duration(ms) * time.Millisecond
		got, err := ParseDelay(FormatDelay(d))
		if err != nil || got != d {
			t.Fatalf("ParseDelay(FormatDelay(%v)=%q) = %v, %v", d, FormatDelay(d), got, err)
		}
	})
}

func FuzzParseDelay(f *testing.F) {
	for _, s := range []string{"1500ms", "90s", "1h30m", "7d", "-1s", "1.5h", "", "0", "1..s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDelay(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDelay(%q) = %v: negative without error", s, d)
		}
	})
}
