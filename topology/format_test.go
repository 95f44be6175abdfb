package topology

import (
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
