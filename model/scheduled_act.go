package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// Actions on scheduled messages (cancel, reschedule, fire now): refused
// before anything is asked where they cannot run, planned by ops off the
// UI goroutine, confirmed, then run with their progress in the header.

// updateAction takes an action's reports and answers.
func (s scheduled) updateAction(msg tea.Msg, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	switch msg := msg.(type) {
	case dueTyped:
		return s.dueTyped(msg.text, env)
	case dueCancelled:
		s.reschedule = nil
		return s, nil, schedOutcome{result: &ui.Result{Kind: ui.ResultInfo, Text: "reschedule not done: the messages keep their due times"}}
	case actionPlannedMsg:
		s.status = ""
		if msg.err != nil {
			return s.fail(oneLine(msg.err.Error()))
		}
		c := newActionConfirm(msg.plan, msg.matched, s.st)
		return s, nil, schedOutcome{open: c, init: c.Init()}
	case actionAnswered:
		if !msg.confirmed {
			return s, nil, schedOutcome{result: &ui.Result{Kind: ui.ResultInfo, Text: string(msg.plan.Action) + " not done: the messages keep their due times"}}
		}
		return s.startAction(msg.plan, env)
	case actionProgressMsg:
		if s.run == nil || msg.id != s.run.id {
			return s, nil, schedOutcome{}
		}
		s.status = actionBusy(msg.p)
		return s, s.run.next, schedOutcome{}
	case actionDoneMsg:
		if s.run == nil || msg.id != s.run.id {
			return s, nil, schedOutcome{}
		}
		s.run, s.status = nil, ""
		res := actionResult(msg)
		if !env.front {
			return s, nil, schedOutcome{result: &res}
		}
		s, cmd, out := s.startScan(s.filterText, s.filter, env)
		s.run.keepResult = true
		out.result = &res
		return s, cmd, out
	}
	var cmd tea.Cmd
	s.scheduledView, cmd = s.scheduledView.Update(msg)
	return s, cmd, schedOutcome{}
}

// pendingAction is an action chosen but not yet planned: which, and on
// the selected message or on every match.
type pendingAction struct {
	act      ops.Action
	selected bool
	delay    time.Duration
	at       time.Time
}

// actionFilter is what an action selects: the scan's filter, narrowed to
// the selected message's id when it acts on one.
func (s scheduled) actionFilter(selected bool) (ops.Filter, string, error) {
	f := s.filter
	if !selected {
		return f, "", nil
	}
	m, ok := s.Selected()
	if !ok {
		return f, "", errors.New("no message selected: scan first, or act on all matched (X/M/N)")
	}
	id := m.MessageID
	if id == "" {
		id = m.TaskID
	}
	if id == "" {
		return f, "", errors.New("the selected message has no message-id to pick it by: narrow the filter (/) and act on all matched (X/M/N)")
	}
	f.MessageID = id
	return f, id, nil
}

// checkAction refuses an action before anything is asked: read-only, no
// connection, a scan running.
func (s scheduled) checkAction(act ops.Action, env schedEnv) error {
	switch {
	case env.readOnly:
		return readOnlyErr(actionWords(map[ops.Action]string{ops.ActReschedule: "m", ops.ActFire: "n"}[act]))
	case env.sched == nil:
		return errors.New("acting on scheduled messages needs an AMQP connection, and this console has none")
	case s.run != nil:
		return errors.New("a scan or an action is running: wait for it, or esc to stop it")
	}
	return nil
}

// askReschedule asks for the new due time on the input line.
func (s scheduled) askReschedule(selected bool, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	if err := s.checkAction(ops.ActReschedule, env); err != nil {
		return s.refuseOrFail(err, env)
	}
	if _, _, err := s.actionFilter(selected); err != nil {
		return s.fail(err.Error())
	}
	s.reschedule = &pendingAction{act: ops.ActReschedule, selected: selected}
	return s, nil, schedOutcome{askDue: true}
}

// openAction starts cancel or fire now on the selected message or every
// match.
func (s scheduled) openAction(act ops.Action, selected bool, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	if err := s.checkAction(act, env); err != nil {
		return s.refuseOrFail(err, env)
	}
	return s.planAction(pendingAction{act: act, selected: selected}, env)
}

// actionPlannedMsg is an action checked by ops, ready to confirm.
type actionPlannedMsg struct {
	plan    ops.ActionPlan
	matched int
	err     error
}

// planAction plans the action off the UI goroutine: PlanScan reads
// quorum rungs' facts, then PlanAction checks the request.
func (s scheduled) planAction(p pendingAction, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	f, id, err := s.actionFilter(p.selected)
	if err != nil {
		return s.fail(err.Error())
	}
	matched := s.res.Matched
	if id != "" {
		matched = 0
		for _, m := range s.res.Messages {
			if m.MessageID == id || m.TaskID == id {
				matched++
			}
		}
	}
	req := ops.ScanRequest{Ladder: s.found.Ladder, Snap: env.snap, Ladders: env.ladders, Filter: f, Force: s.force}
	facts, now := env.facts, env.now
	s.status = "checking the " + string(p.act)
	return s, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), scanTimeout)
		defer cancel()
		sp, err := ops.PlanScan(ctx, facts, req)
		if err != nil {
			return actionPlannedMsg{err: err}
		}
		ap, err := ops.PlanAction(ops.ActionRequest{Scan: sp, Action: p.act, All: f.Empty(), Delay: p.delay, At: p.at}, now)
		return actionPlannedMsg{plan: ap, matched: matched, err: err}
	}, schedOutcome{}
}

// oneLine keeps the first line of an error.
func oneLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// actionConfirm asks before acting on scheduled messages. Acting on every
// message of the ladder (no filter) asks for its name typed.
type actionConfirm struct {
	typedConfirm
	plan    ops.ActionPlan
	matched int
}

func newActionConfirm(p ops.ActionPlan, matched int, st ui.Styles) actionConfirm {
	verb := map[ops.Action]string{ops.ActCancel: "cancel", ops.ActReschedule: "reschedule", ops.ActFire: "fire now"}[p.Action]
	keys := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", verb)),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "keep them")),
	}
	if p.All {
		name := p.Scan.Ladder.Name
		keys = confirmKeys{
			Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", verb)),
			No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "keep them")),
		}
		return actionConfirm{typedConfirm: newTypedConfirm(keys, st, name, "Type "+name+" to act on every message:", "type "+name+" exactly"), plan: p, matched: matched}
	}
	return actionConfirm{typedConfirm: newTypedConfirm(keys, st, "", "", ""), plan: p, matched: matched}
}

// actionAnswered is the confirmation's outcome.
type actionAnswered struct {
	confirmed bool
	plan      ops.ActionPlan
}

// Update answers the dialog.
func (c actionConfirm) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, actionAnswered{confirmed: ans == answeredYes, plan: c.plan}
}

// WithFrame sizes and styles the dialog.
func (c actionConfirm) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog.
func (c actionConfirm) View() string {
	p, st := c.plan, c.st
	title := map[ops.Action]string{ops.ActCancel: "Cancel", ops.ActReschedule: "Reschedule", ops.ActFire: "Fire now"}[p.Action] + " scheduled messages?"
	lines := []string{strings.ToUpper(p.Describe[:1]) + p.Describe[1:] + "."}
	lines = append(lines, st.Muted.Render(fmt.Sprintf("The last scan found %s; the action reads the rungs again and takes exactly what the filter selects then.", topology.Counted(c.matched, "such message", "such messages"))))
	switch p.Action {
	case ops.ActCancel:
		lines = append(lines, st.Muted.Render("Parked, not deleted: replay "+p.Park+" undoes it."))
	case ops.ActReschedule, ops.ActFire:
		lines = append(lines, st.Muted.Render("Each keeps its properties, headers and body, and records where it was rescheduled from."))
	}
	lines = append(lines, st.Muted.Render("Every other message keeps its due time; each copy is confirmed before its source is removed."))
	return c.view(title, lines, 76)
}

// actionProgressMsg is an action's progress.
type actionProgressMsg struct {
	id int
	p  ops.ActionProgress
}

// actionDoneMsg is an action's end.
type actionDoneMsg struct {
	id   int
	plan ops.ActionPlan
	res  ops.ActionResult
	err  error
}

// startAction runs a confirmed action.
func (s scheduled) startAction(p ops.ActionPlan, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	s.seq++
	ctx, cancel := context.WithCancel(context.Background())
	s.run = &scanRun{id: s.seq, cancel: cancel, action: true}
	id := s.seq
	ch := make(chan ops.ActionProgress, 1)
	s.status = p.Describe
	sched := env.sched
	run := func() tea.Msg {
		defer close(ch)
		res, err := p.Run(ctx, sched, forwardLatest(ch))
		return actionDoneMsg{id: id, plan: p, res: res, err: err}
	}
	s.run.next = waitReport(ch, func(ap ops.ActionProgress) tea.Msg { return actionProgressMsg{id: id, p: ap} })
	log := &logCmd{op: string(p.Action), sent: []string{p.Describe, "one confirmed move per rung; the source is acked only after the copy's confirm"}, cmd: run}
	return s, s.run.next, schedOutcome{log: log}
}

// actionBusy words an action's progress for the header.
func actionBusy(p ops.ActionProgress) string {
	done := p.Result.Acted + p.Move.Moved + p.Move.Parked + p.Move.Dropped
	return fmt.Sprintf("acting on rung %d of %d (%s): %d done · esc stops", p.Index+1, p.Rungs, p.Rung, done)
}

// actionResult words an action's end for the header: one line.
func actionResult(m actionDoneMsg) ui.Result {
	r := m.res
	verb := map[ops.Action]string{ops.ActCancel: "cancelled (parked in " + m.plan.Park + ")", ops.ActReschedule: "rescheduled", ops.ActFire: "fired"}[m.plan.Action]
	text := fmt.Sprintf("%s %s", topology.Counted(r.Acted, "message", "messages"), verb)
	if r.Kept > 0 {
		text += fmt.Sprintf(", %d kept (%s)", r.Kept, strings.Join(ui.ReasonLines(r.Reasons), "; "))
	}
	if r.Unknown > 0 {
		text += fmt.Sprintf(", %d possible duplicates", r.Unknown)
	}
	switch {
	case errors.Is(m.err, broker.ErrReadOnly):
		return ui.Result{Kind: ui.ResultWarn, Text: "refused: the broker client is read-only"}
	case errors.Is(m.err, context.Canceled):
		return ui.Result{Kind: ui.ResultWarn, Text: "stopped: " + text + "; the rest keep their due times"}
	case m.err != nil:
		return ui.Result{Kind: ui.ResultError, Text: oneLine(text + "; then " + m.err.Error())}
	case r.Kept > 0 || r.Unknown > 0:
		return ui.Result{Kind: ui.ResultWarn, Text: text}
	}
	return ui.Result{Kind: ui.ResultOK, Text: text}
}

// scanForce is the refusal to scan a ladder where the peek rules say
// reading a rung can push messages on early (a quorum rung with a
// delivery limit before 4.3): it gives the reason and lets the operator
// insist by typing "force", as the peek does.
type scanForce struct {
	typedConfirm
	refused *ops.ScanRefusal
}

func newScanForce(r *ops.ScanRefusal, st ui.Styles) scanForce {
	keys := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "scan anyway")),
		No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	return scanForce{
		typedConfirm: newTypedConfirm(keys, st, forceWord, "Type "+forceWord+" to scan anyway:", "type "+forceWord+" to scan anyway, or esc"),
		refused:      r,
	}
}

// scanForced is the refusal's outcome.
type scanForced struct{ forced bool }

// Update answers the dialog.
func (c scanForce) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, scanForced{forced: ans == answeredYes}
}

// WithFrame sizes and styles the dialog.
func (c scanForce) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog.
func (c scanForce) View() string {
	lines := []string{c.refused.Gate.Why + ".", c.st.Muted.Render("A scan reads every message of every rung, as a peek does; forcing it holds for this ladder's scans and actions until the console closes.")}
	return c.view("Not scanning "+c.refused.Rung, lines, 76)
}
