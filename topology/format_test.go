package topology

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"count small":     {FormatCount(999_999), "999999"},
		"count millions":  {FormatCount(1_250_000), "1.2M"},
		"count tens of M": {FormatCount(34_000_000), "34M"},
		"count billions":  {FormatCount(5_600_000_000), "5.6G"},
		"span ms":         {FormatSpan(1500 * time.Millisecond), "1.5s"},
		"span below 1s":   {FormatSpan(800 * time.Millisecond), "800ms"},
		"span exact":      {FormatSpan(90 * time.Second), "1m30s"},
		"age seconds":     {FormatAge(42 * time.Second), "42s"},
		"age days":        {FormatAge(72 * time.Hour), "3d"},
		"plural one":      {Plural(1, "hop", "hops"), "hop"},
		"plural many":     {Plural(int64(2), "hop", "hops"), "hops"},
		"plural none":     {Plural(0, "hop", "hops"), "hops"},
		"counted":         {Counted(3, "queue", "queues"), "3 queues"},
		"rate zero":       {FormatRate(0), "0"},
		"rate tiny":       {FormatRate(0.01), "<0.1"},
		"rate small":      {FormatRate(2.45), "2.5"},
		"rate hundreds":   {FormatRate(250), "250"},
		"rate thousands":  {FormatRate(1234), "1.23k"},
		"rate round":      {FormatRate(1000), "1k"},
		"rate tens of k":  {FormatRate(12_500), "12.5k"},
		"rate hundreds k": {FormatRate(123_456), "123k"},
		"rate edge":       {FormatRate(999_700), "1M"},
		"rate millions":   {FormatRate(1_250_000), "1.25M"},
		"bytes":           {FormatBytes(48), "48 B"},
		"bytes KiB":       {FormatBytes(3 << 10), "3 KiB"},
		"bytes KiB frac":  {FormatBytes(2150), "2.1 KiB"},
		"bytes MiB":       {FormatBytes(34<<20 + 1<<19), "34.5 MiB"},
		"bytes edge":      {FormatBytes(1<<20 - 1), "1 MiB"},
		"bytes GiB":       {FormatBytes(5 << 30), "5 GiB"},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]float64{"200": 200, "200/s": 200, "6000/m": 100, "36/h": 0.01, "0.5": 0.5}
	for in, want := range good {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-5", "fast", "10/d", "/s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestFormatHorizon(t *testing.T) {
	var got []string
	for _, h := range Horizons {
		got = append(got, FormatHorizon(h))
	}
	if strings.Join(got, ",") != "1m,10m,1h,1d" || FormatHorizon(90*time.Second) != "90s" {
		t.Errorf("labels %v", got)
	}
}

func TestCompact(t *testing.T) {
	for v, want := range map[float64]string{1.234: "1.2k", 12.5: "12k", 9.96: "10.0k"} {
		if got := Compact(v, "k"); got != want {
			t.Errorf("Compact(%v) = %s, want %s", v, got, want)
		}
	}
}

// Every rate below a billion fits the console's five-cell columns, and
// every size a short column, whatever its magnitude; a rate never reads
// as less than a smaller one.
func TestRateAndBytesWidths(t *testing.T) {
	last := ""
	for r := 0.01; r < 1e9; r *= 1.0007 {
		s := FormatRate(r)
		if len(s) > 5 {
			t.Fatalf("FormatRate(%v) = %q: wider than 5 cells", r, s)
		}
		if s != last && rateValue(t, s) < rateValue(t, last) {
			t.Fatalf("FormatRate(%v) = %q reads less than %q", r, s, last)
		}
		last = s
	}
	for n := int64(1); n < 1<<50; n = n*1001/1000 + 1 {
		if s := FormatBytes(n); len(s) > 8 {
			t.Fatalf("FormatBytes(%d) = %q: wider than 8", n, s)
		}
	}
}

// rateValue reads FormatRate's output back, "<0.1" as 0.
func rateValue(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" || s == "<0.1" {
		return 0
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		s, mult = strings.TrimSuffix(s, "k"), 1e3
	case strings.HasSuffix(s, "M"):
		s, mult = strings.TrimSuffix(s, "M"), 1e6
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("rate %q: %v", s, err)
	}
	return v * mult
}
