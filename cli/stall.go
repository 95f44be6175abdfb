package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// observe is how a one-shot command (status, discover, doctor, unstall)
// reads ladders (ops.ObserveOnce), saying on stderr how long a stall
// watch waits. found lists the ladders in scope, for a command to refuse
// a name that is not there before it waits; why, when given, reads what
// names a lost route beyond the snapshot (env.readUnrouted).
func observe(ctx context.Context, v view, insp ops.ScopedInspector, scope ops.Scope, found func([]topology.Found) error, why ...func(context.Context, ops.Observer) ops.Observer) (health.Report, error) {
	return ops.ObserveOnce(ctx, insp, scope, found, v.stallNote, why...)
}

// readUnrouted reads the destinations at the heads of the ladders'
// unroutable queues, and in a sample of the rungs of a ladder whose lost
// route nothing names (ops.ReadUnrouted), where that changes nothing; it
// opens AMQP only when there is something to read. Without
// AMQP or the management API the observer is returned as it was, and the
// report names no destination it cannot see.
func (e *env) readUnrouted(ctx context.Context, o ops.Observer) ops.Observer {
	if !o.UnroutedUnread() {
		return o
	}
	m, err := e.clients().management()
	if err != nil {
		return o
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return o
	}
	v, _ := e.clients().brokerVersion(ctx)
	cctx, cancel := context.WithTimeout(ctx, 2*e.opts.timeout)
	defer cancel()
	return ops.ReadUnrouted(cctx, o, ops.BoundedFacts{Facts: m, Timeout: e.opts.timeout}, conn, v)
}

// observeLadders reads scope once through an observer and, when that read
// had to look for the named ladders among every name a ladder may own,
// once more for their objects alone: their targets and the queues those
// dead-letter to are read only then.
func observeLadders(ctx context.Context, insp ops.ScopedInspector, scope ops.Scope) (ops.Observer, error) {
	return ops.ReadLadders(ctx, insp, scope)
}

// watchStalls runs the observer's stall watch in real time, saying on
// stderr how long it waits.
func watchStalls(ctx context.Context, v view, insp ops.Inspector, o ops.Observer) (ops.Observer, error) {
	return o.WatchStalls(ctx, insp, time.Now, ops.Sleep, v.stallNote)
}

// stallNote says on stderr how long a stall watch waits (text output
// only).
func (v view) stallNote(w ops.StallWatch) {
	v.textOnly(v.Err, fmt.Sprintf("%s with expired messages waiting to be dead-lettered: watching up to %s whether they drain…\n",
		topology.Counted(w.Rungs, "rung", "rungs"), topology.FormatSpan(w.Window)))
}
