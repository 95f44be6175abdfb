package cli

import (
	"encoding/json"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Output is read by people and programs, not embedded in HTML: keep
	// "i>01.5" a direct ladder's key, not "i\u003e01.5".
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table aligns tab-separated columns (ui.TextTable).
func table(w io.Writer) *tabwriter.Writer { return ui.TextTable(w) }

// jsonLadder is a ladder as --json prints it: durations in milliseconds and
// as text, so scripts neither parse "1h30m" nor guess units.
type jsonLadder struct {
	Name      string `json:"name"`
	Vhost     string `json:"vhost"`
	Layout    string `json:"layout"`
	UnitMS    int64  `json:"unit_ms"`
	Unit      string `json:"unit"`
	Levels    int    `json:"levels"`
	Radix     int    `json:"radix"`
	QueueType string `json:"queue_type"`
	// DeadLetterStrategy is how the rungs dead-letter: at-least-once
	// (quorum) or at-most-once (classic, or quorum applied so); with
	// AtMostOnceBelowMS, only the rungs shorter than that are.
	DeadLetterStrategy string   `json:"dead_letter_strategy"`
	AtMostOnceBelowMS  int64    `json:"at_most_once_below_ms,omitempty"`
	MaxDelayMS         int64    `json:"max_delay_ms"`
	MaxDelay           string   `json:"max_delay"`
	Targets            []string `json:"targets"`
	MeanHops           float64  `json:"mean_hops"`
}

func toJSONLadder(l topology.Ladder) jsonLadder {
	targets := l.Targets
	if targets == nil {
		targets = []string{}
	}
	return jsonLadder{
		Name: l.Name, Vhost: l.Vhost, Layout: l.Layout,
		UnitMS: l.Unit.Milliseconds(), Unit: topology.FormatDelay(l.Unit),
		Levels: l.Levels, Radix: l.Radix, QueueType: string(l.QueueType), DeadLetterStrategy: strings.Fields(l.DeadLetterStrategy())[0], AtMostOnceBelowMS: l.AtMostOnceBelow.Milliseconds(),
		MaxDelayMS: l.MaxDelay().Milliseconds(), MaxDelay: topology.FormatDelay(l.MaxDelay()),
		Targets: targets, MeanHops: l.MeanHops(),
	}
}

type jsonDrift struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

func toJSONDrift(ds []topology.Drift) []jsonDrift {
	out := make([]jsonDrift, 0, len(ds))
	for _, d := range ds {
		out = append(out, jsonDrift{string(d.Kind), d.Object, d.Name, d.Detail})
	}
	return out
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
