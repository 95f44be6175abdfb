package ui

import (
	"time"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// ScheduledJSONMessage is one message of `rungs scheduled --json`.
type ScheduledJSONMessage struct {
	Rung          string `json:"rung"`
	Position      int    `json:"position"`
	Dest          string `json:"dest"`
	DelayMS       int64  `json:"delay_ms"`
	RoutingKey    string `json:"routing_key"`
	MessageID     string `json:"message_id"`
	CorrelationID string `json:"correlation_id"`
	TaskID        string `json:"task_id,omitempty"`
	// StackedPrefixes counts the older delay prefixes a Celery key carries.
	StackedPrefixes int    `json:"stacked_prefixes,omitempty"`
	Due             string `json:"due"`
	DueLatest       string `json:"due_latest"`
	Exact           bool   `json:"exact"`
	LeftMS          int64  `json:"left_ms"`
	Basis           string `json:"basis"`
	Why             string `json:"why,omitempty"`
	Preview         string `json:"preview"`
	BodyBytes       int    `json:"body_bytes"`
}

// ScheduledJSONHorizons are the counts by horizon in --json.
type ScheduledJSONHorizons struct {
	Minute int `json:"minute"`
	Hour   int `json:"hour"`
	Day    int `json:"day"`
	Later  int `json:"later"`
}

// ScheduledJSON is what `rungs scheduled --json` prints for a scan; action
// names the action a dry run would take ("" for a listing).
func ScheduledJSON(plan ops.ScanPlan, res ops.ScanResult, action string, now time.Time) map[string]any {
	msgs := make([]ScheduledJSONMessage, 0, len(res.Messages))
	for _, m := range res.Messages {
		msgs = append(msgs, ScheduledJSONMessage{
			Rung: m.Rung, Position: m.Position, Dest: m.Dest, DelayMS: m.Delay.Milliseconds(), RoutingKey: m.RoutingKey,
			MessageID: m.MessageID, CorrelationID: m.CorrelationID, TaskID: m.TaskID, StackedPrefixes: m.Stacked,
			Due: m.Earliest.UTC().Format(time.RFC3339Nano), DueLatest: m.Latest.UTC().Format(time.RFC3339Nano), Exact: m.Exact,
			LeftMS: m.Left(now).Milliseconds(), Basis: string(m.Basis), Why: m.Why, Preview: m.Preview, BodyBytes: m.BodyBytes,
		})
	}
	bases := map[string]int{}
	for k, n := range res.Bases {
		bases[string(k)] = n
	}
	out := map[string]any{
		"ladder": res.Ladder.Name, "layout": res.Ladder.Layout, "vhost": res.Ladder.Vhost, "filter": plan.Filter.String(),
		"seen": res.Seen, "recounted": res.Recounted, "matched": res.Matched, "foreign": res.Foreign, "stacked_keys": res.Stacked, "bases": bases,
		"horizons":             ScheduledJSONHorizons(res.Horizons),
		"horizons_from_depths": ScheduledJSONHorizons(res.FromDepths),
		"held_ms":              res.Held.Milliseconds(), "elapsed_ms": res.Elapsed.Milliseconds(), "messages": msgs,
	}
	if action != "" {
		out["dry_run"], out["action"] = true, action
	}
	return out
}

// ActionJSON is what a scheduled action prints with --json.
func ActionJSON(p ops.ActionPlan, res ops.ActionResult) map[string]any {
	reasons := res.Reasons
	if reasons == nil {
		reasons = map[string]int{}
	}
	return map[string]any{
		"ladder": p.Scan.Ladder.Name, "action": string(p.Action), "filter": p.Scan.Filter.String(), "park": p.Park,
		"acted": res.Acted, "left": res.Left, "kept": res.Kept, "possible_duplicates": res.Unknown, "reconnects": res.Reconnects,
		"reasons": reasons, "held_ms": res.Held.Milliseconds(), "elapsed_ms": res.Elapsed.Milliseconds(),
	}
}

// MigrateJSON is what migrate prints with --json once it ran; ladder is
// how a ladder reads in --json (the CLI's one shape of it).
func MigrateJSON(mp ops.MigratePlan, res ops.MigrateResult, ladder func(topology.Ladder) any) map[string]any {
	type jsonRung struct {
		Queue   string `json:"queue"`
		Moved   int    `json:"moved"`
		Parked  int    `json:"parked"`
		Stayed  int    `json:"stayed"`
		Unknown int    `json:"unknown"`
		Left    int    `json:"left"`
		Stopped string `json:"stopped"`
	}
	rungs := make([]jsonRung, 0, len(res.Rungs))
	for _, r := range res.Rungs {
		rungs = append(rungs, jsonRung{r.Queue, r.Moved, r.Parked, r.Stayed, r.Unknown, r.Left, r.Stopped})
	}
	out := map[string]any{
		"to": ladder(mp.Migration.To), "park": mp.Park,
		"moved": res.Moved, "parked": res.Parked, "stayed": res.Stayed, "unknown": res.Unknown,
		"reconnects": res.Reconnects, "reasons": res.Reasons, "rungs": rungs,
		"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "held_elsewhere": heldElsewhere(res),
	}
	if mp.Group != nil {
		out["from_delays"] = mp.Source()
	} else {
		out["from"] = ladder(mp.Migration.From)
	}
	return out
}

// heldElsewhere is res.HeldElsewhere for --json: an empty list, not null.
func heldElsewhere(res ops.MigrateResult) []string {
	if l := res.HeldElsewhere(); l != nil {
		return l
	}
	return []string{}
}

// MigratePreviewJSON is what migrate --dry-run prints with --json: per
// rung of a ladder, or per delay queue of a delay group.
func MigratePreviewJSON(mp ops.MigratePlan, out []ops.MigrateRungPreview, ladder func(topology.Ladder) any) map[string]any {
	if mp.Group != nil {
		return map[string]any{"dry_run": true, "from_delays": mp.Source(), "to": ladder(mp.Migration.To), "park": mp.Park, "queues": out}
	}
	return map[string]any{"dry_run": true, "from": ladder(mp.Migration.From), "to": ladder(mp.Migration.To), "park": mp.Park, "rungs": out}
}

// ContextsJSON is what `rungs config contexts --json` prints.
func ContextsJSON(l ops.ContextList) map[string]any {
	return map[string]any{"config": l.Path, "contexts": l.Contexts}
}
