package ops

import (
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// rungs' own ladder whose target was deleted: only the keys of what its
// unroutable queue holds name the target. An observer that has not read
// them asks to (UnroutedUnread); once read, the report names the lost
// target at every later reading, and no read is asked for until the
// queue holds more than was read.
func TestUnroutedReadOnceNamesTheTarget(t *testing.T) {
	snap := fixture.WorkLost()
	scope := Scope{Vhost: snap.Vhost}
	at := time.Unix(1700000000, 0)
	o, _ := NewObserver(scope).Observe(Reading{Read: Read{Scope: scope, Snapshot: true}, Snap: snap, Queues: snap.Queues, At: at})
	if !o.UnroutedUnread() {
		t.Fatal("w.unroutable holds 5 unread: want a read asked for")
	}
	if lost := o.Report(at).Ladders[0].Lost; len(lost) != 0 {
		t.Fatalf("unread, the report names %+v: nothing can name the target", lost)
	}
	o = o.WithUnrouted(fixture.WorkUnrouted())
	o, _ = o.Observe(Reading{Read: Read{Scope: scope}, Queues: snap.Queues, At: at.Add(5 * time.Second)})
	if o.UnroutedUnread() {
		t.Error("read, and the queue holds no more: want no read asked for")
	}
	lost := o.Report(at.Add(5 * time.Second)).Ladders[0].Lost
	if len(lost) != 1 || lost[0].Dest != "jobs.q" || lost[0].Held != 5 {
		t.Errorf("after the read and a later reading: lost %+v, want jobs.q with 5", lost)
	}
	more := snap.WithStats(map[string]topology.QueueStats{"w.unroutable": {Ready: 8, Type: "quorum", State: "running"}})
	o, _ = o.Observe(Reading{Read: Read{Scope: scope}, Queues: more.Queues, At: at.Add(10 * time.Second)})
	if !o.UnroutedUnread() {
		t.Error("the queue holds 8, 5 were read: want a read asked for")
	}
}

// Only an unroutable queue that holds messages is worth opening AMQP for.
func TestUnreadOnlyWhenHolding(t *testing.T) {
	snap := fixture.WorkLost()
	scope := Scope{Vhost: snap.Vhost}
	for _, c := range []struct {
		name  string
		ready int64
		want  bool
	}{{"empty", 0, false}, {"holding", 5, true}} {
		s := snap.WithStats(map[string]topology.QueueStats{"w.unroutable": {Ready: c.ready, Type: "quorum", State: "running"}})
		o, _ := NewObserver(scope).Observe(Reading{Read: Read{Scope: scope, Snapshot: true}, Snap: s, Queues: s.Queues})
		if got := o.UnroutedUnread(); got != c.want {
			t.Errorf("%s: UnroutedUnread %v, want %v", c.name, got, c.want)
		}
	}
}
