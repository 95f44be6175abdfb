package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// defaultPeekBody is how much of each body peek prints unless told.
const defaultPeekBody = ui.DefaultMaxBody

func (e *env) peekCommand() *cobra.Command {
	var n, maxBody int
	var force bool
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Show the first messages of a queue without removing them",
		Long: `peek reads the first N messages of a queue and puts them back: their
properties, headers, body (text, pretty JSON, or hex for binary) and their
x-death history drawn as a timeline of hops, oldest first, with each queue's
place in the ladders of the vhost. Jobs retried by rungs' retry library show
their retry history (x-rungs-history) too.

Peeking takes the messages with basic.get and hands them back, so:
  - they stay in the queue, in their order, but are marked redelivered;
  - their TTLs are not restarted (a message held by the peek cannot expire
    meanwhile, and is dead-lettered right after if its time passed: late by
    milliseconds, never early);
  - what a quorum queue counts depends on the release (measured on 3.10.8,
    4.0.5 and 4.3.6):
    - before RabbitMQ 4.3 it counts the peek as a delivery
      (x-delivery-count + 1). With a delivery limit (x-delivery-limit, a
      delivery-limit policy, RabbitMQ 4's default of 20) a message peeked
      once too often is dead-lettered; from a rung of a quorum ladder that
      pushes it into the next rung early. peek refuses quorum rungs with a
      delivery limit (or one it cannot read) and quorum queues with a limit
      unless --force, and --read-only refuses quorum queues altogether.
      rungs apply declares its quorum rungs with no limit on RabbitMQ 4.0
      to 4.2 (x-delivery-limit -1; 3.x has no default), so their peeks need
      no --force; rungs declared by an older rungs keep 4's default of 20;
    - from RabbitMQ 4.3 the hand-back is a return: x-delivery-count stays
      (0 for a message never delivered) and x-acquired-count rises, so no
      delivery limit acts and peek needs no --force. Only a delayed retry
      on the queue (4.3's delayed-retry arguments or policy) holds each
      peeked message back: peek refuses such a rung unless --force, and
      --read-only refuses such a queue.

--read-only allows peeking classic queues: nothing is removed or changed but
the redelivered flag.`,
		Example: `  rungs peek jobs.parked
  rungs peek orders.dlq -n 50 --json
  rungs peek jobs.rung.03 --force     # a quorum rung with a delivery limit, before RabbitMQ 4.3: see above`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.runPeek(cmd.Context(), args[0], n, maxBody, force)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&n, "count", "n", 10, fmt.Sprintf("number of messages to show (1 to %d)", broker.MaxPeek))
	f.IntVar(&maxBody, "max-body", defaultPeekBody, "bytes of each body to print (0: all)")
	f.BoolVar(&force, "force", false, "peek a quorum queue where peeking can dead-letter messages early (before RabbitMQ 4.3) or hold them back (a 4.3 delayed retry)")
	return cmd
}

// peekPlan is what runPeek learned before peeking.
type peekPlan struct {
	gate    ops.PeekGate
	ladders []topology.Ladder
	insp    ops.ScopedInspector // nil without the management API
}

func (e *env) runPeek(ctx context.Context, queue string, n, maxBody int, force bool) error {
	if err := ops.CheckPeekInput(n, maxBody); err != nil {
		return err
	}
	pp, err := e.assessPeek(ctx, queue, force)
	if err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := conn.Peek(ctx, queue, n)
	if err != nil {
		return err
	}
	res = res.WithQueueType(pp.gate.Risk.Type)
	stories := ops.PeekStories(res, ops.PeekLadders(ctx, pp.insp, e.vhost(), res, pp.ladders))
	return e.view().emit(ui.PeekJSON(res, stories, pp.gate), written(func(w io.Writer) { ui.WritePeek(w, res, stories, pp.gate, maxBody) }))
}

// assessPeek reads what ops.ReadPeek reads of the queue, by name, and
// decides whether peeking may go ahead.
func (e *env) assessPeek(ctx context.Context, queue string, force bool) (peekPlan, error) {
	m, err := e.clients().management()
	if err != nil {
		return e.view().gatePeek(ops.PeekRequest{Queue: topology.Queue{Name: queue}, Unchecked: err}, force, e.config().ReadOnly)
	}
	insp := ops.Bounded{Insp: m, Timeout: e.opts.timeout}
	req, err := ops.ReadPeek(ctx, insp, m, e.vhost(), queue)
	if err != nil {
		return peekPlan{}, err
	}
	pp, err := e.view().gatePeek(req, force, e.config().ReadOnly)
	if req.Unchecked == nil {
		pp.insp = insp
	}
	return pp, err
}

// gatePeek has ops.GatePeek weigh req, says what a peek that goes ahead
// changes, and refuses one that may not.
func (v view) gatePeek(req ops.PeekRequest, force, readOnly bool) (peekPlan, error) {
	req.Force, req.ReadOnly = force, readOnly
	pp := peekPlan{ladders: req.Ladders, gate: ops.GatePeek(req)}
	if err := pp.gate.Refusal(req.Queue.Name); err != nil {
		return pp, err
	}
	fmt.Fprint(v.Err, ui.PeekNoticeText(pp.gate))
	return pp, nil
}
