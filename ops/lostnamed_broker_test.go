package ops

import (
	"fmt"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// A watcher (the console, the exporter) that saw an NServiceBus endpoint
// bound straight to the delivery exchange names it once it is deleted,
// with the count held for it, on every release: the earlier snapshot is
// the evidence, and no message is read.
func TestLostNamedByTheWatcherOnTheBroker(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "nsb.v2", Layout: "nsb", Unit: time.Second, Levels: 28, Radix: 2, QueueType: topology.Quorum, Targets: []string{"sales"}})
	scope := Scope{Vhost: e.vhost}
	o, _, err := NewObserver(scope).Refresh(ctxFor(t, 30*time.Second), e.mgmt, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Found()) != 1 || len(o.Found()[0].Ladder.Targets) != 1 {
		t.Fatalf("found %+v, want nsb.v2 with its target sales", o.Found())
	}
	entry, err := l.Entry(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	key, err := l.Key(time.Second, "sales")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := range 3 {
		msgs = append(msgs, broker.Message{Exchange: entry, RoutingKey: key, MessageID: fmt.Sprint("m", i), Body: []byte("{}")})
	}
	e.publish(t, msgs...)
	if err := e.conn.Teardown(ctxFor(t, 30*time.Second), topology.Plan{Queues: []topology.Queue{{Name: "sales"}}}); err != nil {
		t.Fatal(err)
	}
	var lost string
	if err := testutil.Until(t, 2*time.Minute, func() error {
		// A snapshot at each reading, as a queue that went calls for.
		o, _, err = o.Resnap().Refresh(ctxFor(t, 30*time.Second), e.mgmt, time.Now)
		if err != nil {
			return err
		}
		ls := o.Report(o.At()).Ladders
		if len(ls) != 1 || len(ls[0].Lost) != 1 {
			return fmt.Errorf("no lost route judged yet: %+v", ls)
		}
		d := ls[0].Lost[0]
		lost = fmt.Sprintf("%s %d", d.Dest, d.Held)
		if lost != "sales 3" {
			return fmt.Errorf("lost %q, want sales 3", lost)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range o.Report(o.At()).Ladders[0].Rows {
		if r.Stalled {
			t.Errorf("%s is judged stalled", r.Queue)
		}
	}
}
