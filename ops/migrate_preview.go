package ops

import (
	"context"
	"errors"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// MigrateMessagePreview is one message of a dry run: what is known of its
// delay and where it would go.
type MigrateMessagePreview struct {
	Position    int    `json:"position"`
	MessageID   string `json:"message_id"`
	DelayMS     int64  `json:"delay_ms"`
	SpentMS     int64  `json:"spent_ms"`
	Basis       string `json:"basis"`
	RemainingMS int64  `json:"remaining_ms"`
	// TargetDelayMS is RemainingMS rounded up to the target's unit.
	TargetDelayMS int64  `json:"target_delay_ms,omitempty"`
	Exchange      string `json:"exchange,omitempty"`
	RoutingKey    string `json:"routing_key,omitempty"`
	Target        string `json:"target,omitempty"`
	Park          string `json:"park,omitempty"`
}

// MigrateRungPreview is a dry run's look at one rung (or delay queue).
type MigrateRungPreview struct {
	Queue    string                  `json:"queue"`
	TTLMS    int64                   `json:"ttl_ms"`
	Ready    int                     `json:"ready"`
	Skipped  string                  `json:"skipped,omitempty"`
	Messages []MigrateMessagePreview `json:"messages"`
	// Estimates are the Messages' estimates, in their order.
	Estimates []topology.Estimate `json:"-"`
}

// MovePreviewer peeks at a queue's head and says where each message would
// go (*broker.Conn).
type MovePreviewer interface {
	PreviewMove(ctx context.Context, o broker.MoveOptions, n int) ([]broker.MovePreview, broker.PeekResult, error)
}

// MigratePreviewRequest is how a dry run peeks: Facts reads a rung's peek
// facts (nil: none read), Open connects for the first peek (none when
// every rung is skipped), Note hears what previewing a rung changes.
type MigratePreviewRequest struct {
	Vhost           string
	Facts           PeekFacter
	Open            func(context.Context) (MovePreviewer, error)
	Count           int
	Force, ReadOnly bool
	Note            func(string)
}

// Preview peeks at the head of each rung (or delay queue) of the plan,
// behind the peek gate (GatePreview), and says where each message would
// go: the one preview of both kinds of migration.
func (mp MigratePlan) Preview(ctx context.Context, req MigratePreviewRequest) ([]MigrateRungPreview, error) {
	var pv MovePreviewer
	var out []MigrateRungPreview
	for _, mr := range mp.Rungs {
		rp := MigrateRungPreview{Queue: mr.Rung.Queue, TTLMS: mr.Rung.TTL.Milliseconds(), Ready: int(mr.Ready), Messages: []MigrateMessagePreview{}}
		facts := broker.PeekFacts{}
		if !mr.Missing {
			facts = ReadPeekFacts(ctx, req.Facts, req.Vhost, mr.Queue, topology.Version{})
		}
		skipped, note := mp.GatePreview(mr, facts, req.Force, req.ReadOnly)
		if note != "" && req.Note != nil {
			req.Note(note)
		}
		if rp.Skipped = skipped; skipped != "" {
			out = append(out, rp)
			continue
		}
		if pv == nil {
			c, err := req.Open(ctx)
			if err != nil {
				return nil, err
			}
			pv = c
		}
		previews, res, err := pv.PreviewMove(ctx, mp.MoveOptions(mr), req.Count)
		// A delay queue with x-expires may be gone by now: nothing to show.
		if err != nil && !(mp.Group != nil && errors.Is(err, broker.ErrNotFound)) {
			return nil, err
		}
		rp.Ready = res.Ready
		for _, p := range previews {
			mp.addPreview(&rp, mr, p.Message)
		}
		out = append(out, rp)
	}
	return out, nil
}

// addPreview places one peeked message and adds it to rp.
func (mp MigratePlan) addPreview(rp *MigrateRungPreview, mr MigrateRung, pm broker.PeekedMessage) {
	p := mp.Place(mr, pm.Delivery)
	m := MigrateMessagePreview{
		Position: pm.Position, MessageID: pm.MessageID, Park: p.Park,
		DelayMS: p.Estimate.Total.Milliseconds(), SpentMS: p.Estimate.Spent.Milliseconds(),
		Basis: string(p.Estimate.Basis), RemainingMS: p.Estimate.Remaining.Milliseconds(),
	}
	if p.Park == "" {
		m.Exchange, m.RoutingKey, m.Target = p.Trace.Exchange, p.Trace.Key, p.Trace.Target
		m.TargetDelayMS = p.Trace.Delay.Milliseconds()
	}
	rp.Messages = append(rp.Messages, m)
	rp.Estimates = append(rp.Estimates, p.Estimate)
}
