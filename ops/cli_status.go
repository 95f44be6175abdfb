package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// ObserveOnce is how a one-shot command (status, discover, doctor,
// unstall) reads ladders: one snapshot of scope through an Observer, the
// console's. Stalled dead-lettering shows only across samples, so when a
// rung holds expired messages waiting to be dead-lettered the observer
// watches it (Observer.WatchStalls in real time, up to 15s, less once
// every such rung has dead-lettered some; note says so as it starts)
// before judging. The report is as of the last reading.
//
// found, when given, is handed the ladders in scope before any wait, for
// a command to refuse a name that is not there; why, each in turn, reads
// what names a lost route beyond the snapshot before the report is
// judged.
func ObserveOnce(ctx context.Context, insp ScopedInspector, scope Scope, found func([]topology.Found) error, note func(StallWatch), why ...func(context.Context, Observer) Observer) (health.Report, error) {
	o, err := ReadLadders(ctx, insp, scope)
	if err != nil {
		return health.Report{}, err
	}
	if found != nil {
		if err := found(o.Found()); err != nil {
			return health.Report{}, err
		}
	}
	o, err = o.WatchStalls(ctx, insp, time.Now, Sleep, note)
	if err != nil {
		return health.Report{}, err
	}
	for _, read := range why {
		o = read(ctx, o)
	}
	return o.Report(o.At()), nil
}

// ExportNotes are what export says on stderr before it writes a ladder
// the flags describe rather than one it read: the broker was not read
// (read false, mgmtErr why), or it was and the ladder is not there
// (notFound, then the layout note the flags' resolution left). A ladder
// read from the broker is exported without a note.
func ExportNotes(read bool, mgmtErr error, discovered bool, notFound, layoutNote string) []string {
	switch {
	case !read:
		return []string{fmt.Sprintf("rungs: note: the broker was not read (%v); exporting the ladder the flags describe", mgmtErr)}
	case !discovered:
		notes := []string{fmt.Sprintf("rungs: note: %s; exporting the ladder the flags describe", notFound)}
		if layoutNote != "" {
			notes = append(notes, "rungs: note: "+layoutNote)
		}
		return notes
	}
	return nil
}

// StatusReads are what status reads beside its observation, each the
// front end's own, as it reaches the broker and says a failed read its
// way: what names a lost route (Unrouted), what delayed retry holds in
// the queues read and, with beside, those a policy names (Retry), and
// the vhost's bridges (Bridges). Note says how long a stall watch waits.
type StatusReads struct {
	Note     func(StallWatch)
	Unrouted func(context.Context, Observer) Observer
	Retry    func(ctx context.Context, qs []topology.Queue, beside bool) health.RetryHold
	Bridges  func(context.Context) []topology.Bridge
}

// Status is rungs status: the ladders observed once (ObserveOnce),
// refusing a named ladder not there, with what delayed retry holds; and
// without --ladder the bridges beside them (StatusRequest.Beside), which
// status of one ladder does not read.
func Status(ctx context.Context, insp ScopedInspector, req StatusRequest, r StatusReads) (health.Report, []topology.Bridge, error) {
	var retry health.RetryHold
	rep, err := ObserveOnce(ctx, insp, req.Scope(), req.CheckFound, r.Note, r.Unrouted, func(ctx context.Context, o Observer) Observer {
		retry = r.Retry(ctx, o.Snapshot().Queues, req.Beside())
		return o
	})
	if err != nil {
		return health.Report{}, nil, err
	}
	var bridges []topology.Bridge
	if req.Beside() {
		bridges = r.Bridges(ctx)
	}
	return rep.WithRetry(retry), bridges, nil
}
