package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayReader is what a replay reads: its queues and ladders by name
// and, for a dry run of a quorum source, the source's peek facts
// (*broker.Management).
type ReplayReader interface {
	ScopedInspector
	PeekFacter
}

// ReplayInto is a ladder to replay into as the CLI's flags name it, before
// anything is read: Replay finds it (Query) in what it read and lets it
// supply every shape the Spec was not given (LadderSpec.Resolve).
type ReplayInto struct {
	Spec  LadderSpec
	Query LadderQuery
	// ShapeGiven says the Spec alone fixes the ladder's keys (its layout
	// and, where the layout's library does not fix them, unit, levels and
	// radix): without the management API a replay into the ladder can go
	// ahead only then.
	ShapeGiven bool
	// Version is the broker's release, asked only for a ladder not found
	// (LadderSpec.Resolve).
	Version func() (topology.Version, error)
}

// ShapeUnknownError refuses a replay into a ladder whose shape neither the
// broker (its management API did not answer: Err) nor the request says:
// keys guessed from the defaults route into the ladder's unroutable queue.
// The front end words it, having tried the broker another way first.
type ShapeUnknownError struct{ Err error }

func (e *ShapeUnknownError) Error() string {
	return "the shape of the ladder is unknown: " + e.Err.Error()
}

func (e *ShapeUnknownError) Unwrap() error { return e.Err }

// InterruptedError says an operation (a replay, a migration, a scheduled
// scan or action) stopped because its context ended, after doing part of
// what it was asked: the front end exits with its interrupted code (130)
// and says what was done.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }

func (e *InterruptedError) Unwrap() error { return e.Err }

// ReplayDryRunCount is how many messages a dry run previews when the
// request sets no limit.
const ReplayDryRunCount = 50

// Replay is a replay's one entry point, for both front ends. It checks the
// request and, unless req.Scope holds what the front end already read
// (the console's snapshot), reads through r by name what the replay
// checks its route against (ReadReplay): r nil, or a failed read, leaves
// the plan unchecked (Unchecked says why) and the broker's mandatory
// returns catch what would not route. It resolves the ladder req.To.Into
// names, plans the Move and, for a dry run, the peek gate's request. The
// front end confirms (Question, Word) and runs the plan (Run), or
// previews it (Preview). Errors of the plan are ReplayRequest.Plan's.
func Replay(ctx context.Context, r ReplayReader, req ReplayRequest) (ReplayPlan, error) {
	fail := ReplayPlan{Ready: -1}
	if _, err := req.Check(); err != nil {
		return fail, refusal(err)
	}
	if req.ReadOnly && !req.DryRun {
		return fail, fmt.Errorf("replay: %w", broker.ErrReadOnly)
	}
	scope, unchecked := req.read(ctx, r)
	fail.Unchecked = unchecked
	if in := req.To.Into; in != nil {
		l, err := in.resolve(req.Vhost, scope, unchecked)
		if err != nil {
			return fail, err
		}
		req.To.Ladder = &l
	}
	p, err := req.Plan(scope)
	p.Unchecked, p.Scope = unchecked, scope
	if err != nil {
		return p, refusal(err)
	}
	p.Peek = PeekRequest{Queue: topology.Queue{Name: req.Source}, Unchecked: unchecked}
	if req.DryRun && scope != nil {
		p.Peek, err = PeekIn(ctx, r, scope.Snap, req.Source)
	}
	return p, err
}

// refusal is a refused request as an *InputError, unless its type says
// more: a field (*FieldError), a queue not there (*NoQueueError) or a
// route the broker would not deliver (*RouteError), which the front ends
// word themselves.
func refusal(err error) error {
	var (
		fe *FieldError
		nq *NoQueueError
		re *RouteError
	)
	if errors.As(err, &fe) || errors.As(err, &nq) || errors.As(err, &re) {
		return err
	}
	return &InputError{err}
}

// read is what the replay checks its request against: req.Scope when the
// front end holds it, else what ReadReplay reads through r (nil: the
// management API is not there, for the reason req.Unreadable gives).
func (req ReplayRequest) read(ctx context.Context, r ReplayReader) (*BrokerView, error) {
	switch {
	case req.Scope != nil:
		return req.Scope, nil
	case r == nil && req.Unreadable != nil:
		return nil, req.Unreadable
	case r == nil:
		return nil, errors.New("no management API")
	}
	ladder := ""
	if in := req.To.Into; in != nil {
		ladder = in.Spec.Name
	}
	return ReadReplay(ctx, r, req.Vhost, req, ladder)
}

// resolve finds the ladder in scope (nil: unread, for the reason
// unchecked gives) and refuses one that is not there, or whose keys
// cannot be known.
func (in ReplayInto) resolve(vhost string, scope *BrokerView, unchecked error) (topology.Ladder, error) {
	var snap *topology.Snapshot
	if scope != nil {
		snap = &scope.Snap
	}
	rl, err := in.Spec.Resolve(vhost, snap, in.Query, in.Version)
	switch {
	case err != nil:
		return rl.Ladder, err
	case snap == nil && !in.ShapeGiven:
		return rl.Ladder, &ShapeUnknownError{unchecked}
	case snap != nil && !rl.Found:
		return rl.Ladder, fmt.Errorf("%s; nothing was replayed", NoLadderText(rl.Ladder, in.Query))
	}
	return rl.Ladder, nil
}

// NoLadderText says that l is not in its vhost, naming its layout only
// when the query asked for one: a ladder of another layout under the name
// would have been found.
func NoLadderText(l topology.Ladder, q LadderQuery) string {
	if q.Layout != "" {
		return fmt.Sprintf("no %s ladder %q in vhost %s", l.Layout, l.Name, l.Vhost)
	}
	return fmt.Sprintf("no ladder %q in vhost %s", l.Name, l.Vhost)
}

// Question is what a front end asks before it runs the plan: about how
// many messages go from where to where, and the limit.
func (p ReplayPlan) Question() string {
	ready := "the"
	if p.Ready >= 0 {
		ready = fmt.Sprintf("about %d", p.Ready)
	}
	q := fmt.Sprintf("replay %s message(s) from %s %s", ready, p.Options.Source, p.Describe)
	if p.Options.Limit > 0 {
		q += fmt.Sprintf(" (at most %d)", p.Options.Limit)
	}
	return q
}

// Word is what a typed confirmation of the plan asks for: the source.
func (p ReplayPlan) Word() string { return p.Options.Source }

// Run moves the plan's messages through m, progress (nil: none) hearing
// of the Move as it goes. It returns what moved whatever happened, and as
// the error the replay's outcome: an *InterruptedError when ctx ended, the
// Move's failure, or the messages that stayed on the source.
func (p ReplayPlan) Run(ctx context.Context, m Mover, progress func(broker.MoveProgress)) (broker.MoveProgress, error) {
	o := p.Options
	o.Progress = progress
	res, err := m.Move(ctx, o)
	switch {
	case ctx.Err() != nil:
		return res, &InterruptedError{fmt.Errorf("replay interrupted after %d message(s); the rest stay on %s", res.Moved+res.Parked, o.Source)}
	case err != nil:
		return res, err
	case res.Kept > 0:
		return res, fmt.Errorf("%d message(s) stayed on %s (reasons above)", res.Kept, o.Source)
	}
	return res, nil
}

// ReplayDryRun is what a dry run found: the source's depth, and of each
// message previewed whether it moves, and where.
type ReplayDryRun struct {
	Ready    int
	Verdicts []ReplayVerdict
}

// PreviewCount is how many messages a dry run of the plan previews: its
// limit, as far as a peek reaches, else ReplayDryRunCount.
func (p ReplayPlan) PreviewCount() int {
	if p.Options.Limit > 0 {
		return min(p.Options.Limit, broker.MaxPeek)
	}
	return ReplayDryRunCount
}

// Preview peeks at the source's first messages through pv and says where
// each would go (ReplayVerdicts), moving nothing.
func (p ReplayPlan) Preview(ctx context.Context, pv MovePreviewer) (ReplayDryRun, error) {
	previews, res, err := pv.PreviewMove(ctx, p.Options, p.PreviewCount())
	if err != nil {
		return ReplayDryRun{}, err
	}
	return ReplayDryRun{Ready: res.Ready, Verdicts: ReplayVerdicts(previews, p.Scope)}, nil
}
