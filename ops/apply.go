package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// ApplyRequest is what apply knows before it declares anything.
type ApplyRequest struct {
	// Ladder is the ladder to declare; Existing the ladder of its name
	// found on the broker, nil when there is none or nothing was read.
	Ladder   topology.Ladder
	Existing *topology.Ladder
	// Snap is the vhost as read, nil when the management API did not
	// answer (SnapErr says why).
	Snap    *topology.Snapshot
	SnapErr error
	// Version reads the broker's release. PlanApply calls it only for a
	// ladder whose safety depends on it.
	Version func() (topology.Version, error)
}

// ApplyPlan is what apply declares, and the warnings to give first.
type ApplyPlan struct {
	Plan     topology.Plan
	Warnings []string
}

// PlanApply decides whether apply may declare req.Ladder, and what. It
// refuses, before anything is declared, another shape under the ladder's
// name (two shapes share its entry and level exchanges, whose bindings
// would deliver a message twice), a layout the release cannot route
// (topology.LayoutBroken), and an object the broker would refuse to
// declare again (topology.Plan.Conflicts). A quorum ladder's queues that
// rungs alone reads are declared for the release (topology.Plan.ForRelease),
// and existing ones are kept as they are. When the version cannot be
// read, apply goes ahead with a warning: refusing every broker without a
// management API would make the direct layout unusable there.
func PlanApply(req ApplyRequest) (ApplyPlan, error) {
	l := req.Ladder
	if ex := req.Existing; ex != nil && !ex.SameShape(l) {
		return ApplyPlan{}, fmt.Errorf("apply %s: %s ladder %s already exists in vhost %s as %s; the flags describe %s, and two shapes would share its exchanges and deliver messages twice; nothing was declared (apply the new shape under another name and move messages with rungs migrate, or rungs teardown %s first)",
			l.Name, ex.Layout, l.Name, l.Vhost, ex.Shape(), l.Shape(), l.Name)
	}
	if ex := req.Existing; ex != nil && !ex.SameStrategy(l) {
		return ApplyPlan{}, fmt.Errorf("apply %s: the rungs of ladder %s dead-letter %s and the flags ask %s; the broker cannot change a queue's x-dead-letter-strategy in place and rungs never deletes a queue for you; nothing was declared (apply under another name and move the messages with rungs migrate, or rungs teardown %s first)",
			l.Name, l.Name, ex.DeadLetterStrategy(), l.DeadLetterStrategy(), l.Name)
	}
	var out ApplyPlan
	if w := AtMostOnceWarning(l); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	w, err := CheckLayout(l, req.Version)
	if err != nil {
		return ApplyPlan{}, err
	}
	if w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if req.Snap == nil {
		out.Plan = l.Plan()
		out.Warnings = append(out.Warnings, fmt.Sprintf("cannot read the vhost through the management API (%v), so apply cannot check for conflicting objects or a ladder of another shape under this name, and declares quorum rungs as before (leaders on the node it is connected to; on RabbitMQ 4.0 to 4.2 the default delivery limit, so reading them needs --force)", req.SnapErr))
		return out, nil
	}
	var ws []string
	out.Plan, ws = DeclaredPlan(l, req.Snap, req.Version)
	out.Warnings = append(out.Warnings, ws...)
	if c := out.Plan.Conflicts(*req.Snap); len(c) > 0 {
		return ApplyPlan{}, fmt.Errorf("apply %s: %s %s exists with other arguments: %s (rungs never deletes it for you); nothing was declared%s",
			l.Name, c[0].Object, c[0].Name, c[0].Detail, more(len(c)-1, "conflict"))
	}
	return out, nil
}

// AtMostOnceWarning states what an at-most-once ladder trades, every
// time it is applied (new, or kept without the flag), or "" for a ladder
// that dead-letters as its queue type does by default.
func AtMostOnceWarning(l topology.Ladder) string {
	if !l.AtMostOnce {
		return ""
	}
	return fmt.Sprintf("ladder %s dead-letters at most once %s, for a faster drain: %s. To go back to at least once, apply another ladder without the flag and move the messages there with rungs migrate",
		l.Name, AtMostOnceRungs(l), topology.AtMostOnceRisk)
}

// AtMostOnceRungs says which of an at-most-once ladder's rungs are.
func AtMostOnceRungs(l topology.Ladder) string {
	if l.AtMostOnceBelow > 0 {
		return "from its rungs shorter than " + topology.FormatDelay(l.AtMostOnceBelow)
	}
	return "between its rungs"
}

// DeclaredPlan is what apply declares for l in the vhost snap (nil when
// it was not read): for a quorum ladder of rungs' own layouts, its queues
// as the release wants them (topology.Plan.ForRelease), except that a
// queue that exists keeps the arguments it has, since the broker refuses
// to declare it again with others. plan --objects and export show the
// same. Without the vhost no release argument is added: which queues
// exist is unknown. The warnings say what could not be done.
func DeclaredPlan(l topology.Ladder, snap *topology.Snapshot, version func() (topology.Version, error)) (topology.Plan, []string) {
	p := l.Plan()
	if snap == nil || !l.ReleaseDependent() {
		return p, nil
	}
	var warnings []string
	v, err := version()
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("the broker's version was not read (%v), so the quorum rungs are declared as before: leaders on the node apply is connected to, and on RabbitMQ 4.0 to 4.2 the default delivery limit of 20, so reading them (peek, scheduled) needs --force", err))
	}
	p = p.ForRelease(v)
	if kept := p.KeptDefaultLimit(*snap); len(kept) > 0 && v.QuorumRequeueNackCounts() {
		warnings = append(warnings, fmt.Sprintf("%s of ladder %s keep RabbitMQ %s's default delivery limit of %d (declared before rungs turned it off; the broker refuses to change it in place), so reading them (peek, scheduled) needs --force; to lift it, move the messages out (rungs migrate), rungs teardown %s, and apply again",
			topology.Counted(len(kept), "queue", "queues"), l.Name, v, v.QuorumDefaultDeliveryLimit(), l.Name))
	}
	return p.KeepingLegacyArgs(*snap), warnings
}

// more says how many more there are, if any.
func more(n int, what string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more %s)", n, map[bool]string{true: what, false: what + "s"}[n == 1])
}

// CheckLayout refuses a ladder whose layout the broker's release cannot
// route (topology.LayoutBroken), and warns of one it routes until a
// dead-lettering retries, or when the release cannot be read. version is
// read only for a ladder routed by BCC, the only layouts at risk.
func CheckLayout(l topology.Ladder, version func() (topology.Version, error)) (warning string, err error) {
	if !l.RoutesByBCC() {
		return "", nil
	}
	v, err := version()
	if err != nil {
		return fmt.Sprintf("the broker's version was not checked (%v); the direct layout needs a RabbitMQ that keeps BCC keys when dead-lettering (not 3.13.0 to 3.13.2)", err), nil
	}
	switch l.RiskOn(v) {
	case topology.LayoutBroken:
		return "", fmt.Errorf("apply %s: %s; nothing was declared (upgrade to 3.13.3 or later, or use --layout prefix)", l.Name, topology.BCCBrokenWhy(v.String()))
	case topology.LayoutLosesOnRetry:
		return topology.BCCRetryWhy(v, l.Name) + " (rungs doctor watches for it; --layout prefix avoids it)", nil
	}
	return "", nil
}
