package model

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// purgeTimeout bounds purging one queue.
const purgeTimeout = 15 * time.Second

// purgeConfirm asks before purging. Purging a whole ladder requires typing
// its name, as GitHub does for deleting a repository.
type purgeConfirm struct {
	typedConfirm
	title string
	lines []string
	plan  ops.PurgePlan
}

// newPurgeConfirm confirms a planned purge: of one queue, or of a ladder.
func newPurgeConfirm(p ops.PurgePlan, st ui.Styles) purgeConfirm {
	if p.Ladder != nil {
		return newLadderPurge(p, st)
	}
	return newQueuePurge(p, st)
}

// newQueuePurge confirms purging one queue.
func newQueuePurge(p ops.PurgePlan, st ui.Styles) purgeConfirm {
	q := p.Queues[0]
	c := purgeConfirm{typedConfirm: newTypedConfirm(defaultConfirmKeys(false), st, "", "", ""), title: "Purge " + q.Queue + "?", plan: p}
	lost := fmt.Sprintf("%s in %s will be deleted for good.", q.Describe(), st.Bold.Render(q.Queue))
	switch q.Role {
	case topology.RoleRung:
		lost += " They are delayed messages: they will never reach their target."
	case topology.RoleUnroutable:
		lost += " They are messages no binding routed; look at them before purging."
	}
	c.lines = []string{lost}
	if q.Unacked > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("%s unacknowledged %s stay: a purge only removes ready ones.", topology.FormatCount(q.Unacked), topology.Plural(int(q.Unacked), "message", "messages"))))
	}
	return c
}

// newLadderPurge confirms purging every queue the ladder owns: its rungs,
// its done queue and its unroutable queue. Destination queues belong to
// the applications and are left alone.
func newLadderPurge(p ops.PurgePlan, st ui.Styles) purgeConfirm {
	name := p.Ladder.Name
	c := purgeConfirm{
		typedConfirm: newTypedConfirm(defaultConfirmKeys(true), st, name, "Type "+name+" to confirm:", fmt.Sprintf("type %s exactly to purge it", name)),
		title:        "Purge the whole ladder " + name + "?",
		plan:         p,
	}
	total := p.Total()
	c.lines = []string{fmt.Sprintf("Every ready message in %d queues of %s will be deleted for good: %s %s in total.",
		len(p.Queues), st.Bold.Render(name), st.Bold.Render(topology.FormatCount(total.Lost())), topology.Plural(int(total.Lost()), "message", "messages"))}
	if total.Lost() != total.Ready { // 4.3+: expired and delayed ones go too
		c.lines = []string{fmt.Sprintf("Every message a purge takes in %d queues of %s will be deleted for good: %s in total.",
			len(p.Queues), st.Bold.Render(name), st.Bold.Render(total.Describe()))}
	}
	deepest := p.Deepest(4)
	for _, q := range deepest {
		c.lines = append(c.lines, fmt.Sprintf("  %8s  %s", topology.FormatCount(q.Lost()), q.Queue))
	}
	if rest := len(p.Queues) - len(deepest); rest > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("  and %d more %s", rest, topology.Plural(rest, "queue", "queues"))))
	}
	if len(p.Untouched) > 0 {
		c.lines = append(c.lines, st.Muted.Render(fmt.Sprintf("Destination queues (%d) are not touched.", len(p.Untouched))))
	}
	return c
}

// purgeAnswered is the purge confirmation's outcome: the queues to purge
// if the operator said yes, none if no.
type purgeAnswered struct {
	confirmed bool
	plan      ops.PurgePlan
}

// Update answers the dialog.
func (c purgeConfirm) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, purgeAnswered{confirmed: ans == answeredYes, plan: c.plan}
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

// purge runs the plan off the UI goroutine, one purgeTimeout per queue.
func purge(p broker.Purger, plan ops.PurgePlan) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout*time.Duration(max(1, len(plan.Queues))))
		defer cancel()
		res, err := plan.Run(ctx, p, nil)
		return purgedMsg{queues: len(res.Queues), deleted: res.Purged, failed: res.Failed, err: err}
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
