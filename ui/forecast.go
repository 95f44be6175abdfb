package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// horizonName spells a forecast horizon for the pane.
func horizonName(d topology.DueBy, later bool) string {
	if later {
		return "later"
	}
	return "within " + ShortDelay(d.By)
}

// span prints a forecast bound pair.
func span(f topology.RungForecast) string {
	if f.Unknown {
		return "unknown: stuck rung"
	}
	from := "now"
	if e := floorSecond(f.Earliest); e > 0 {
		from = ShortDelay(e)
	}
	return from + " – " + ShortDelay(ceilSecond(f.Latest))
}

// floorSecond and ceilSecond round a bound outwards to whole seconds (the
// head ages behind them are whole seconds anyway), so that a rounded bound
// is still a bound. Sub-second ladders keep tenths.
func floorSecond(d time.Duration) time.Duration { return d.Truncate(grain(d)) }

func ceilSecond(d time.Duration) time.Duration {
	g := grain(d)
	return (d + g - 1).Truncate(g)
}

func grain(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return 100 * time.Millisecond
	}
	return time.Second
}

// forecastList renders the forecast pane in w×h cells: the messages due
// within each horizon (an estimate and its certain–possible bounds), then
// when each busy rung's messages arrive.
func forecastList(fc topology.Forecast, st Styles, w, h int, keys bool) string {
	dest := "their destinations"
	if fc.Dest != "" {
		dest = fc.Dest
	}
	head := st.TableHeader.Render(fmt.Sprintf("FORECAST  %s in flight to %s", topology.Counted(fc.Messages, "message", "messages"), dest))
	hint := ""
	if keys {
		hint = "f or esc: back"
	}
	out := []string{spread(head, st.Muted.Render(hint), w)}
	p := newPalette(st, false)
	var b strings.Builder
	due := newTable([]column{
		{id: "when", title: "ARRIVE", width: 14},
		{id: "est", title: "ESTIMATE", width: 9, right: true},
		{id: "bounds", title: "CERTAIN–POSSIBLE", width: 18, right: true},
	}, w)
	due.header(&b, p)
	out = append(out, b.String())
	all := append(append([]topology.DueBy(nil), fc.Due...), fc.Later)
	for i, d := range all {
		b.Reset()
		vals := map[string]string{
			"when": horizonName(d, i == len(all)-1), "est": topology.FormatCount(d.Estimate),
			"bounds": topology.FormatCount(d.Min) + " – " + topology.FormatCount(d.Max),
		}
		due.row(&b, p, func(c column, _ int) cell { return cell{text: vals[c.id], ink: &p.text} })
		out = append(out, b.String())
	}
	out = append(out, st.Muted.Render(fit(forecastSummary(fc), w, false)))
	out = append(out, "")
	b.Reset()
	rungs := newTable([]column{
		{id: "rung", title: "RUNG", width: max(10, min(40, w-50))},
		{id: "ttl", title: "TTL", width: 7, right: true},
		{id: "n", title: "MESSAGES", width: 8, right: true},
		{id: "span", title: "ARRIVE BETWEEN", width: 20},
	}, w)
	rungs.header(&b, p)
	out = append(out, b.String())
	shown := 0
	for _, r := range fc.Rungs {
		if r.Messages == 0 {
			continue
		}
		b.Reset()
		ink := &p.text
		if r.Unknown {
			ink = &p.danger
		}
		vals := map[string]string{"rung": r.Rung.Queue, "ttl": ShortDelay(r.Rung.TTL), "n": topology.FormatCount(r.Messages), "span": span(r)}
		rungs.row(&b, p, func(c column, _ int) cell {
			if c.id == "span" {
				return cell{text: vals[c.id], ink: ink}
			}
			return cell{text: vals[c.id], ink: &p.text}
		})
		out = append(out, b.String())
		shown++
	}
	if shown == 0 {
		out = append(out, st.Muted.Render(fit("No messages wait in the rungs.", w, false)))
	}
	out = append(out, "", st.Muted.Render(fit("From each rung's TTL, its oldest message's age and the rungs below it; the", w, false)),
		st.Muted.Render(fit("estimate assumes an even spread. Statistics lag the broker by a few seconds.", w, false)))
	if len(out) > h {
		out = out[:h]
	}
	return strings.Join(out, "\n")
}

// forecastSummary is one sentence: when everything arrives, and what has
// no forecast.
func forecastSummary(fc topology.Forecast) string {
	var parts []string
	switch {
	case fc.Messages == 0:
		parts = append(parts, "Nothing in flight.")
	case fc.Unknown > 0:
		parts = append(parts, fmt.Sprintf("%s in stuck rungs may never arrive.", topology.Counted(fc.Unknown, "message", "messages")))
	case floorSecond(fc.Earliest) == 0:
		parts = append(parts, fmt.Sprintf("All arrive within %s.", topology.FormatSpan(ceilSecond(fc.Latest))))
	default:
		parts = append(parts, fmt.Sprintf("All arrive between %s and %s from now.", topology.FormatSpan(floorSecond(fc.Earliest)), topology.FormatSpan(ceilSecond(fc.Latest))))
	}
	if fc.Held > 0 {
		parts = append(parts, fmt.Sprintf("%s held by consumers not counted.", topology.FormatCount(fc.Held)))
	}
	return strings.Join(parts, " ")
}

// ForecastText is the forecast as `rungs status` prints it.
func ForecastText(fc topology.Forecast, w int) string {
	if w <= 0 {
		w = 100
	}
	out := strings.Split(forecastList(fc, Styles{}, w, 1<<20, false), "\n")
	for i, l := range out {
		out[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(out, "\n") + "\n"
}
