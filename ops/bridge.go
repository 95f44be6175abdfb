package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// BridgeReader reads the queues of a vhost's bridges in one filtered
// listing; *broker.Management implements it.
type BridgeReader interface {
	BridgeStats(ctx context.Context, vhost string) ([]topology.Queue, error)
}

// ReadBridges reads the bridges (rungs bridge) of a vhost: their intake,
// due and parked queues with statistics. ReachScoped reads them through
// insp's filtered listing (a BridgeReader), and fails with an inspector
// that has none rather than read the vhost; ReachVhost reads the vhost's
// snapshot (a test's fake).
func ReadBridges(ctx context.Context, insp Inspector, vhost string, reach Reach) ([]topology.Bridge, error) {
	if reach == ReachVhost {
		snap, err := insp.Snapshot(ctx, vhost)
		if err != nil {
			return nil, err
		}
		return topology.DiscoverBridges(snap), nil
	}
	br, ok := insp.(BridgeReader)
	if !ok {
		return nil, fmt.Errorf("%T lists no bridge queues: a scoped read needs BridgeStats (ask for ReachVhost to read the whole vhost)", insp)
	}
	qs, err := br.BridgeStats(ctx, vhost)
	if err != nil {
		return nil, err
	}
	return topology.DiscoverBridges(topology.Snapshot{Vhost: vhost, Queues: qs}), nil
}

// BridgeAsk is `rungs bridge` as a front end takes it, before anything is
// read: the intake exchange, the exit exchange ("" for EXCHANGE.exit) and
// its type, the exchange whose bindings the exit copies ("" none) and
// each consumer's prefetch.
type BridgeAsk struct {
	Vhost                    string
	Exchange, Exit, ExitType string
	CopyFrom                 string
	Prefetch                 int
}

// Check reads the ask's names and refuses what can never work: a
// *FieldError naming the option ("exchange", "copy-bindings-from",
// "prefetch"), or an *InputError.
func (a BridgeAsk) Check() (topology.BridgeNames, error) {
	names := topology.NamesOfBridge(a.Exchange, a.Exit)
	switch {
	case a.Exchange == "":
		return names, fieldErr("exchange", "is required: the intake exchange producers publish to")
	case a.CopyFrom != "" && (a.CopyFrom == names.Exchange || a.CopyFrom == names.Exit):
		return names, fieldErr("copy-bindings-from", "%s: copy from another exchange than the bridge's own", a.CopyFrom)
	case a.Prefetch < 1:
		return names, fieldErr("prefetch", "must be at least 1, got %d", a.Prefetch)
	}
	if err := topology.CheckBridge(names, a.ExitType); err != nil {
		return names, &InputError{err}
	}
	return names, nil
}

// BridgeSetup is what a bridge needs before it starts and what it will
// create: the bindings its exit copies, and in words what is missing
// (the front end asks before creating any of it).
type BridgeSetup struct {
	Names   topology.BridgeNames
	Copy    []topology.Binding
	Missing []string
}

// PlanBridge reads what the bridge of ask would create: the ladder when
// ladderFound is false, the bridge's queues (read by name) and, with them
// missing, its exchanges, and the bindings copied from ask.CopyFrom (a
// read of the vhost's bindings).
func PlanBridge(ctx context.Context, insp ScopedInspector, ask BridgeAsk, ladder string, ladderFound bool) (BridgeSetup, error) {
	names, err := ask.Check()
	s := BridgeSetup{Names: names}
	if err != nil {
		return s, err
	}
	if !ladderFound {
		s.Missing = append(s.Missing, "ladder "+ladder)
	}
	want := []string{names.Intake, names.Due, names.Parked}
	qs, err := LookupQueues(ctx, insp, ask.Vhost, want)
	if err != nil {
		return s, err
	}
	have := map[string]bool{}
	for _, q := range qs {
		have[q.Name] = true
	}
	for _, n := range want {
		if !have[n] {
			s.Missing = append(s.Missing, "queue "+n)
		}
	}
	if len(s.Missing) > 0 && !have[names.Intake] {
		s.Missing = append(s.Missing, "exchanges "+names.Exchange+" and "+names.Exit)
	}
	if ask.CopyFrom == "" {
		return s, nil
	}
	snap, err := insp.Snapshot(ctx, ask.Vhost)
	if err != nil {
		return s, fmt.Errorf("read the bindings of %s: %w", ask.CopyFrom, err)
	}
	if _, ok := snap.Exchange(ask.CopyFrom); !ok {
		return s, fieldErr("copy-bindings-from", "names no exchange %q in vhost %s", ask.CopyFrom, ask.Vhost)
	}
	s.Copy = topology.CopiedBindings(snap, ask.CopyFrom, names)
	s.Missing = append(s.Missing, fmt.Sprintf("%s copied from %s", topology.Counted(len(s.Copy), "binding", "bindings"), ask.CopyFrom))
	return s, nil
}

// BridgeRefused words what BridgeAsk.Check or PlanBridge refused as the
// flag it is about (--due, --every, ...), as bad input.
func BridgeRefused(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return badInput("--%s %v", fe.Field, fe.Err)
	}
	return err
}
