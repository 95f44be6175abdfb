package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// MaxBody is the largest body publish sends (see ops.MaxBody).
const MaxBody = ops.MaxBody

type publishFlags struct {
	delay, body, to, contentType string
	idPrefix, rate               string
	headers                      []string
	count                        int
	persistent                   bool
}

func (e *env) publishCommand() *cobra.Command {
	var pf publishFlags
	cmd := &cobra.Command{
		Use:   "publish --delay D",
		Short: "Publish delayed messages into a ladder, with confirms",
		Long: `publish spells the delay as a routing key and publishes into the ladder's
entry exchange with publisher confirms and the mandatory flag. Before
publishing it simulates the route over the broker's bindings, and refuses
(publishing nothing) if the message would not reach its destination.
It reports confirmed, returned and failed counts and exits non-zero unless
every message was confirmed.

Without --rate it publishes as fast as confirms allow, up to 10000 messages:
a slipped key should not flood a broker. More need a rate: --rate 1000/s
paces them, --rate max sends them as fast as confirms allow.`,
		Example: `  rungs publish --ladder jobs --delay 90s
  rungs publish --ladder jobs --delay 1h30m --to orders.retry --body @job.json --header tenant=acme
  rungs publish --ladder jobs --delay 5s --count 1000 --persistent=false
  rungs publish --ladder jobs --delay 1m --count 60000 --rate 1000/s
  rungs publish --ladder jobs --delay 1m --count 100000 --rate max`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runPublish(cmd.Context(), pf) },
	}
	f := cmd.Flags()
	f.StringVar(&pf.delay, "delay", "", "delay, e.g. 1500ms, 90s, 1h30m, 7d (required)")
	f.StringVar(&pf.to, "to", "", "destination queue (default: the ladder's done queue)")
	f.StringVar(&pf.body, "body", "", "message body, or @FILE to read it from a file")
	f.StringArrayVar(&pf.headers, "header", nil, "header K=V (repeatable)")
	f.IntVar(&pf.count, "count", 1, "number of messages")
	f.BoolVar(&pf.persistent, "persistent", true, "persistent delivery mode (survives a broker restart in durable queues)")
	f.StringVar(&pf.contentType, "content-type", "", "content type (default: text/plain for UTF-8 bodies, else application/octet-stream)")
	f.StringVar(&pf.idPrefix, "id-prefix", "", "give each message the message-id PREFIX1, PREFIX2, ... (to find every one at the destination)")
	f.StringVar(&pf.rate, "rate", "", "at most this many messages a second: 500, 500/s, 6000/m, or max (default: as fast as confirms allow, up to 10000 messages; more need a rate, max included)")
	_ = cmd.MarkFlagRequired("delay")
	return cmd
}

func (e *env) runPublish(ctx context.Context, pf publishFlags) error {
	req, err := pf.request()
	if err != nil {
		return err
	}
	if err := ops.RefuseReadOnly(e.config(), "publish"); err != nil {
		return err
	}
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return err
	}
	if err := e.unreadShape(ctx, r, "nothing published"); err != nil {
		return err
	}
	req.Ladder = r.ladder
	msg, err := req.PlanFound(r.graph(), r.discovered)
	if err := ops.PublishRefusal(err, e.opts.ladder.noLadder(r)); err != nil {
		return err
	}
	tr := msg.Trace
	if pf.count > 1 && r.snap != nil {
		e.warnBurst(ctx, pf.count, tr, req.Rate)
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	if r.snap == nil {
		// Warned only once AMQP is up: if it is not, its error is the one to read.
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("route not checked (management API: %v); keys follow the shape the flags give", r.mgmtErr))))
	}
	start := time.Now()
	total, err := msg.Send(ctx, conn, pf.count, req.Rate)
	e.view().reportPublish(tr, total, pf.count, time.Since(start))
	if err != nil {
		return fmt.Errorf("publish stopped after %d of %d messages were confirmed: %w", total.Confirmed, pf.count, err)
	}
	return nil
}

// warnBurst says, before a burst is sent, how late it will arrive when
// the broker has a drain capacity saved for the ladder's rungs (rungs bench
// --drain --save). A capacity that cannot be read (none saved, a user
// without the administrator tag) says nothing: the forecast is a help,
// never a reason not to publish.
func (e *env) warnBurst(ctx context.Context, n int, tr topology.Trace, rate float64) {
	m, err := e.clients().management()
	if err != nil {
		return
	}
	caps, err := m.DrainCapacities(ctx)
	if err != nil {
		return
	}
	fmt.Fprint(e.Err, ui.WarningsText(ops.BurstWarnings(n, tr, caps, rate)))
}

// request reads the flags into a publish request (ops.PublishInput).
func (pf publishFlags) request() (ops.PublishRequest, error) {
	return ops.PublishInput{Delay: pf.delay, Rate: pf.rate, Body: pf.body, To: pf.to, ContentType: pf.contentType, IDPrefix: pf.idPrefix,
		Headers: pf.headers, Count: pf.count, Persistent: pf.persistent}.Request()
}

func (v view) reportPublish(tr topology.Trace, r broker.PublishResult, asked int, took time.Duration) {
	_ = v.emit(ui.PublishJSON(tr, r, asked, took), ui.PublishText(tr, r, asked, took))
}
