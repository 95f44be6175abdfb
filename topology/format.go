package topology

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file is rungs' one home for formatting numbers, spans and labels:
// the console, the CLI, the exporter and the health rules' sentences all
// print through it, so that a count or a horizon reads the same
// everywhere. It lives in topology, not ui, because the health rules that
// write those sentences are domain code and must not import a drawing
// package. (ui keeps only what fits cells: ShortDelay.)

// FormatCount prints a message count in at most six cells: exact below a
// million, so that a depth that moves by one is visible, then 1.2M, 34M,
// 5.6G.
func FormatCount(n int64) string {
	switch {
	case n < 0:
		return "-" + FormatCount(-n)
	case n < 1_000_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000_000:
		return Compact(float64(n)/1e6, "M")
	default:
		return Compact(float64(n)/1e9, "G")
	}
}

// Compact prints v with one decimal below ten and none above, then the
// unit: Compact(1.23, "M") is 1.2M, Compact(34.5, "G") is 34G.
func Compact(v float64, suffix string) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + suffix
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + suffix
}

// FormatHorizon names a forecast horizon in its largest whole unit: 1m,
// 10m, 1h, 1d (the exporter's within label and status --json's).
func FormatHorizon(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Second)) + "s"
}

// FormatSpan prints a span of time exactly, as FormatDelay does, except
// that fractional seconds read as seconds (51.2s rather than 51200ms).
func FormatSpan(d time.Duration) string {
	if d > time.Second && d < time.Minute && d%time.Millisecond == 0 && d%time.Second != 0 {
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	}
	return FormatDelay(d)
}

// FormatAge prints how long ago something happened, coarsely: 4s, 3m, 2h,
// 5d.
func FormatAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}

// Plural picks a noun for a count: Plural(1, "hop", "hops").
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ParseRate reads "200", "200/s", "6000/m" or "36000/h" as messages a
// second.
func ParseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	r, err := strconv.ParseFloat(num, 64)
	if err != nil || r <= 0 {
		return 0, fmt.Errorf("%q is not a positive rate (try 200/s or 6000/m)", s)
	}
	switch unit {
	case "", "s":
	case "m":
		r /= 60
	case "h":
		r /= 3600
	default:
		return 0, fmt.Errorf("%q: unknown unit %q (use /s, /m or /h)", s, unit)
	}
	return r, nil
}

// Counted prints a count with its noun: Counted(3, "queue", "queues") is
// "3 queues".
func Counted[N ~int | ~int64](n N, one, many string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Plural(n, one, many)
}

// FormatRate prints messages a second, wherever rungs shows a rate: the
// console's cells, the CLI's progress lines and the benchmarks' tables.
// One decimal below ten, whole numbers below a thousand, then three
// significant digits: 0, <0.1, 2.5, 250, 1.25k, 12.5k, 125k, 1.25M. Three
// digits keep a benchmark's figures within a percent and still fit the
// console's five-cell columns.
func FormatRate(r float64) string {
	switch {
	case r <= 0:
		return "0"
	case r < 0.05:
		return "<0.1"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case r < 999.5:
		return strconv.FormatFloat(r, 'f', 0, 64)
	case r < 999.5e3:
		return significant(r/1e3, "k")
	}
	return significant(r/1e6, "M")
}

// FormatBytes prints a size in binary units, as RabbitMQ's management UI
// and /proc report memory: 48 B, 2.1 KiB, 34.5 MiB, 1.25 GiB (three
// significant digits).
func FormatBytes(n int64) string {
	if n < 0 {
		return "-" + FormatBytes(-n)
	}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n) / (1 << 10)
	for _, unit := range []string{" KiB", " MiB", " GiB"} {
		if v < 1023.5 {
			return significant(v, unit)
		}
		v /= 1 << 10
	}
	return significant(v, " TiB")
}

// significant prints v (at least 1) with three significant digits, its
// trailing zeros dropped, then the unit: 1.25k, 12k, 125k.
func significant(v float64, suffix string) string {
	prec := 0
	switch {
	case v < 9.995:
		prec = 2
	case v < 99.95:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if prec > 0 {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s + suffix
}
