// Package bridge is rungs bridge: a long-running service that takes
// messages published as the delayed-message plugin takes them (an
// exchange, the producer's own routing key, an x-delay header in
// milliseconds) and runs them through a ladder, delivering each when due
// to an exit exchange with its original routing key. The plugin's
// producers change one setting, the exchange name, and keep their code.
//
// Two loops run over one connection:
//
//   - intake: consumes E.bridge.intake, reads each message's x-delay
//     (topology.DecideDelay) and publishes it into the ladder (target
//     E.bridge.due), straight to the exit exchange (no delay), or to
//     E.bridge.parked with the reason (a delay that is not a number, or
//     beyond the ladder);
//   - exit: consumes E.bridge.due and publishes each message to the exit
//     exchange with the routing key it carried in x-rungs-bridge-key.
//
// Each source message is acked only once its copy is confirmed, so a
// kill at any point loses nothing: what was not acked is delivered again,
// and the copy made of a redelivered message is marked
// x-rungs-possible-duplicate (each copy also has its own x-rungs-replay-id,
// as replay gives). Several bridges may consume one intake as competing
// consumers; a restart resumes from the queues, which hold all the state.
package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Options configure a bridge.
type Options struct {
	Names    topology.BridgeNames
	ExitType string
	// Ladder is the ladder the delays wait in; its Targets must include
	// Names.Due. LadderPlan is what declares it (ops.PlanApply's plan).
	Ladder     topology.Ladder
	LadderPlan topology.Plan
	// Copy are bindings to declare on the exit exchange
	// (topology.CopiedBindings).
	Copy []topology.Binding
	// Version is the broker's release (arguments of the quorum queues).
	Version topology.Version
	// Clamp schedules a delay beyond the ladder's maximum at the maximum
	// instead of parking it.
	Clamp bool
	// FromReceipt counts each delay from when the broker received the
	// message (its timestamp interceptor's timestamp_in_ms header), as the
	// plugin does, instead of from when the bridge takes it: a backlog or
	// a stopped bridge then no longer adds to delays. A message without
	// the header is counted from when the bridge takes it (NoReceipt).
	// The broker's and the bridge's clocks must agree: a bridge clock
	// ahead by S sends messages out up to S early.
	FromReceipt bool
	// Prefetch bounds the unacknowledged messages of each loop (default
	// 2000): what a kill -9 may duplicate, at most, and what keeps
	// confirms pipelined (BenchmarkBridgeIntake). Batch is the messages
	// one worker publishes per confirm round (default 250).
	Prefetch, Batch int
	// Workers is how many batches of each loop may await their confirms
	// at once, each worker with a consumer of its own (default 8).
	Workers int
	// Publish is the connection copies are published on; nil publishes on
	// the consuming connection. Give one of its own: RabbitMQ's flow
	// control slows a publishing connection, and on the consuming one
	// that would hold up deliveries and acks too.
	Publish *broker.Conn
	// Log receives one line per trouble (a lost connection, a batch the
	// broker did not confirm); errors are redacted by broker.
	Log io.Writer
	// Now is the clock (tests replace it).
	Now func() time.Time
}

// Progress is what a bridge has done since it started: the values a
// status line, the console or the exporter show.
type Progress struct {
	Started time.Time
	// Received counts intake messages taken; Scheduled those sent into the
	// ladder, Now those delivered at once, Parked those parked (by reason,
	// its first words), Exited those the ladder delivered that left
	// through the exit exchange.
	Received, Scheduled, Now, Exited int64
	Parked                           map[string]int64
	// Redelivered counts messages the broker delivered again (intake or
	// due): each made a copy marked as a possible duplicate.
	Redelivered int64
	// Unconfirmed counts copies the broker did not confirm, whose source
	// was handed back to be tried again.
	Unconfirmed int64
	// NoReceipt counts messages that, with FromReceipt, carried no receipt
	// time: their delays counted from when the bridge took them.
	NoReceipt int64
	// IntakeLag is how long the latest intake message waited in the
	// intake, from its AMQP timestamp (whole seconds; 0 without one).
	IntakeLag time.Duration
	// ExitLate is how late the latest due message left, after its due
	// time; ExitLateMax the most of any.
	ExitLate, ExitLateMax time.Duration
}

// ParkedTotal sums Parked.
func (p Progress) ParkedTotal() int64 {
	var n int64
	for _, v := range p.Parked {
		n += v
	}
	return n
}

// Bridge runs one bridge over one connection.
type Bridge struct {
	conn *broker.Conn
	opt  Options
	run  string
	seq  atomic.Int64

	mu sync.Mutex
	p  Progress

	routeMu sync.Mutex
	routes  map[uint64]topology.Trace

	// noReceiptSaid keeps the log to one line about messages without a
	// receipt time.
	noReceiptSaid sync.Once
}

// New checks the options and builds a bridge; it does not contact the
// broker.
func New(conn *broker.Conn, opt Options) (*Bridge, error) {
	if err := topology.CheckBridge(opt.Names, opt.ExitType); err != nil {
		return nil, err
	}
	found := false
	for _, t := range opt.Ladder.Targets {
		found = found || t == opt.Names.Due
	}
	if !found {
		return nil, fmt.Errorf("ladder %s does not deliver to %s", opt.Ladder.Name, opt.Names.Due)
	}
	if opt.Prefetch <= 0 {
		opt.Prefetch = 2000
	}
	if opt.Batch <= 0 {
		opt.Batch = 250
	}
	if opt.Workers <= 0 {
		opt.Workers = 8
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &Bridge{conn: conn, opt: opt, run: hex.EncodeToString(b), routes: map[uint64]topology.Trace{}, p: Progress{Started: opt.Now(), Parked: map[string]int64{}}}, nil
}

// Progress returns a copy of what the bridge has done so far.
func (b *Bridge) Progress() Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.p
	p.Parked = make(map[string]int64, len(b.p.Parked))
	for k, v := range b.p.Parked {
		p.Parked[k] = v
	}
	return p
}

// Plan is everything the bridge declares: its own objects, the ladder
// and the copied bindings.
func (b *Bridge) Plan() topology.Plan {
	p := topology.BridgePlan(b.opt.Names, b.opt.ExitType, b.opt.Version)
	p.Bindings = append(p.Bindings, b.opt.Copy...)
	return p
}

// Declare declares the bridge's objects and its ladder, idempotently: an
// object that exists with the same arguments is left alone, one that
// exists otherwise stops it with an error naming it. The due queue is
// declared before the ladder, so the ladder finds its target.
func (b *Bridge) Declare(ctx context.Context) error {
	own := b.Plan()
	copied := own.Bindings[1:]
	own.Bindings = own.Bindings[:1]
	if _, err := b.conn.Apply(ctx, own); err != nil {
		return fmt.Errorf("declare bridge %s: %w", b.opt.Names.Exchange, err)
	}
	if _, err := b.conn.Apply(ctx, b.opt.LadderPlan); err != nil {
		return fmt.Errorf("declare ladder %s: %w", b.opt.Ladder.Name, err)
	}
	if len(copied) > 0 {
		if _, err := b.conn.Apply(ctx, topology.Plan{Bindings: copied}); err != nil {
			return fmt.Errorf("copy bindings to %s: %w", b.opt.Names.Exit, err)
		}
	}
	return nil
}

// Run moves messages until ctx ends, then returns nil (or the first error
// that cannot be waited out). A lost connection is waited out: the loops
// consume again once it is back, and the broker has put back whatever
// was not acked.
func (b *Bridge) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	fail := make(chan error, 2)
	for _, l := range []struct {
		queue string
		build func([]broker.Delivery) []outgoing
	}{{b.opt.Names.Intake, b.intakeBatch}, {b.opt.Names.Due, b.exitBatch}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.consume(ctx, l.queue, l.build); err != nil {
				fail <- err
			}
		}()
	}
	wg.Wait()
	close(fail)
	return <-fail // nil when both ended with ctx
}
