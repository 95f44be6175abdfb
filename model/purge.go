package model

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// purgeTimeout bounds purging one queue.
const purgeTimeout = 15 * time.Second

// purgeTarget is one queue to purge and the depth the operator was shown.
type purgeTarget struct {
	queue string
	ready int64
}

// purgeConfirm asks before purging. Purging a whole ladder requires typing
// its name, as GitHub does for deleting a repository.
type purgeConfirm struct {
	typedConfirm
	title   string
	lines   []string
	targets []purgeTarget
}

// newQueuePurge confirms purging one queue.
func newQueuePurge(row health.Row, st ui.Styles) purgeConfirm {
	c := purgeConfirm{typedConfirm: newTypedConfirm(defaultConfirmKeys(false), st, "", "", ""), title: "Purge " + row.Queue + "?"}
	c.targets = []purgeTarget{{row.Queue, row.Stats.Ready}}
	n := row.Stats.Ready
	lost := fmt.Sprintf("%s ready %s in %s will be deleted for good.", topology.FormatCount(n), topology.Plural(int(n), "message", "messages"), st.Bold.Render(row.Queue))
	switch row.Kind {
	case health.RungRow:
		lost += " They are delayed messages: they will never reach their target."
	case health.UnroutableRow:
		lost += " They are messages no binding routed; look at them before purging."
	}
	c.lines = []string{lost}
	if row.Stats.Unacked > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("%s unacknowledged %s stay: a purge only removes ready ones.", topology.FormatCount(row.Stats.Unacked), topology.Plural(int(row.Stats.Unacked), "message", "messages"))))
	}
	return c
}

// newLadderPurge confirms purging every queue the ladder owns: its rungs,
// its done queue and its unroutable queue. Destination queues belong to
// the applications and are left alone.
func newLadderPurge(v ladderView, st ui.Styles) purgeConfirm {
	name := v.found.Ladder.Name
	c := purgeConfirm{
		typedConfirm: newTypedConfirm(defaultConfirmKeys(true), st, name, "Type "+name+" to confirm:", fmt.Sprintf("type %s exactly to purge it", name)),
		title:        "Purge the whole ladder " + name + "?",
	}
	var total int64
	var targets []string
	for _, r := range v.rows {
		owned := r.Kind == health.RungRow || r.Kind == health.UnroutableRow || (r.Kind == health.TargetRow && !isDestination(v, r.Queue))
		if r.Missing {
			continue
		}
		if !owned {
			if r.Kind == health.TargetRow {
				targets = append(targets, r.Queue)
			}
			continue
		}
		c.targets = append(c.targets, purgeTarget{r.Queue, r.Stats.Ready})
		total += r.Stats.Ready
	}
	c.lines = []string{fmt.Sprintf("Every ready message in %d queues of %s will be deleted for good: %s %s in total.",
		len(c.targets), st.Bold.Render(name), st.Bold.Render(topology.FormatCount(total)), topology.Plural(int(total), "message", "messages"))}
	deepest := append([]purgeTarget(nil), c.targets...)
	sort.SliceStable(deepest, func(i, j int) bool { return deepest[i].ready > deepest[j].ready })
	shown := 0
	for _, t := range deepest {
		if t.ready == 0 || shown == 4 {
			break
		}
		c.lines = append(c.lines, fmt.Sprintf("  %8s  %s", topology.FormatCount(t.ready), t.queue))
		shown++
	}
	if rest := len(c.targets) - shown; rest > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("  and %d more %s", rest, topology.Plural(rest, "queue", "queues"))))
	}
	if len(targets) > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("Destination queues (%d) are not touched.", len(targets))))
	}
	return c
}

// isDestination tells an application's destination from the ladder's own
// done queue.
func isDestination(v ladderView, q string) bool {
	for _, t := range v.found.Ladder.Targets {
		if t == q {
			return true
		}
	}
	return false
}

// purgeAnswered is the purge confirmation's outcome: the queues to purge
// if the operator said yes, none if no.
type purgeAnswered struct {
	confirmed bool
	targets   []purgeTarget
}

// Update answers the dialog.
func (c purgeConfirm) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, purgeAnswered{confirmed: ans == answeredYes, targets: c.targets}
}

// WithFrame sizes and styles the dialog.
func (c purgeConfirm) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog.
func (c purgeConfirm) View() string { return c.view(c.title, c.lines, 72) }

// purgedMsg reports a purge.
type purgedMsg struct {
	queues  int // queues purged
	deleted int
	failed  string // the queue that failed, if one did
	err     error
}

// purge empties the queues one after the other, stopping at the first
// failure so that the report says exactly what was and was not purged.
func purge(p broker.Purger, targets []purgeTarget) tea.Cmd {
	return func() tea.Msg {
		var out purgedMsg
		for _, t := range targets {
			ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout)
			n, err := p.Purge(ctx, t.queue)
			cancel()
			if err != nil {
				out.failed, out.err = t.queue, err
				return out
			}
			out.queues++
			out.deleted += n
		}
		return out
	}
}

// purgeResult words a purge outcome for the header.
func purgeResult(m purgedMsg) ui.Result {
	done := fmt.Sprintf("purged %s %s from %d %s", topology.FormatCount(int64(m.deleted)), topology.Plural(m.deleted, "message", "messages"), m.queues, topology.Plural(m.queues, "queue", "queues"))
	switch {
	case errors.Is(m.err, broker.ErrReadOnly):
		return ui.Result{Kind: ui.ResultWarn, Text: "refused: the broker client is read-only"}
	case m.err != nil && m.queues == 0:
		return ui.Result{Kind: ui.ResultError, Text: fmt.Sprintf("purge %s failed: %v", m.failed, m.err)}
	case m.err != nil:
		return ui.Result{Kind: ui.ResultError, Text: fmt.Sprintf("%s, then %s failed: %v", done, m.failed, m.err)}
	}
	return ui.Result{Kind: ui.ResultOK, Text: done}
}
