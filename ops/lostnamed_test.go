package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// An NServiceBus ladder in the direct routing topology: the sales
// endpoint's queue bound straight to the delivery exchange. directSales
// is the ladder and the vhost with sales bound; retired is the vhost
// once sales is deleted, 3 expired messages held in the lowest rung and
// 2 more on their way in the 1h rung.
func directSales(t *testing.T, qt topology.QueueType) (l topology.Ladder, bound, retired topology.Snapshot) {
	t.Helper()
	l, err := topology.Ladder{Name: "nsb.v2", Layout: "nsb", Unit: time.Second, Levels: 28, Radix: 2, QueueType: qt, Targets: []string{"sales"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	bound = l.Plan().Snapshot()
	bound.Vhost = "v"
	if _, ok := bound.Queue("sales"); !ok {
		bound.Queues = append(bound.Queues, topology.Queue{Name: "sales", Durable: true})
	}
	retired = topology.Snapshot{Vhost: bound.Vhost, Exchanges: bound.Exchanges}
	for _, q := range bound.Queues {
		if q.Name != "sales" {
			retired.Queues = append(retired.Queues, q)
		}
	}
	for _, b := range bound.Bindings {
		if b.Destination != "sales" {
			retired.Bindings = append(retired.Bindings, b)
		}
	}
	retired = fixture.WithStats(retired, map[string]topology.QueueStats{
		"nsb.v2.delay-level-00": {Expired: 3, Type: string(qt), State: "running"},
		"nsb.v2.delay-level-12": {Ready: 2, Type: string(qt), State: "running"},
	})
	return l, bound, retired
}

func observed(t *testing.T, snaps ...topology.Snapshot) (Observer, time.Time) {
	t.Helper()
	scope := Scope{Vhost: "v"}
	at := time.Unix(1700000000, 0)
	o := NewObserver(scope)
	for i, s := range snaps {
		at = at.Add(time.Duration(i) * 5 * time.Second)
		o, _ = o.Observe(Reading{Read: Read{Scope: scope, Snapshot: true}, Snap: s, Queues: s.Queues, At: at})
	}
	// The held count stands still for a minute of readings: what judges
	// a rung held rather than slow.
	last := snaps[len(snaps)-1]
	for range 12 {
		at = at.Add(5 * time.Second)
		o, _ = o.Observe(Reading{Read: Read{Scope: scope}, Queues: last.Queues, At: at})
	}
	if len(o.Found()) != 1 {
		t.Fatalf("found %d ladders, want nsb.v2", len(o.Found()))
	}
	return o, at
}

func soleLost(t *testing.T, o Observer, at time.Time) (dest string, held int64) {
	t.Helper()
	lost := o.Report(at).Ladders[0].Lost
	if len(lost) != 1 {
		t.Fatalf("lost routes %+v, want one", lost)
	}
	return lost[0].Dest, lost[0].Held
}

// Nothing beyond the snapshot names the endpoint: "every destination",
// with the binding to restore one and its name left to fill in; the
// ready messages in the 1h rung are asked to be read.
func TestLostUnnamedWithoutEvidence(t *testing.T) {
	_, _, retired := directSales(t, topology.Quorum)
	o, at := observed(t, retired)
	if d, held := soleLost(t, o, at); d != "" || held != 3 {
		t.Errorf("lost %q with %d held, want every destination with 3", d, held)
	}
	rem := o.Report(at).Ladders[0].Lost[0].Restore
	if want := "rabbitmqadmin -V v declare binding source=nsb.v2.delay-delivery destination=<endpoint> routing_key='#.<endpoint>'"; !strings.Contains(rem, want) {
		t.Errorf("restore %q lacks %q", rem, want)
	}
	if !o.UnroutedUnread() {
		t.Error("the 1h rung holds ready messages unread: want a read asked for")
	}
}

// A watcher that saw sales bound names it once it is gone, with the
// count held, and reads no message for it.
func TestLostNamedByAnEarlierSnapshot(t *testing.T) {
	_, bound, retired := directSales(t, topology.Quorum)
	o, at := observed(t, bound, retired)
	if d, held := soleLost(t, o, at); d != "sales" || held != 3 {
		t.Errorf("lost %q with %d held, want sales with 3", d, held)
	}
	if o.UnroutedUnread() {
		t.Error("named by the earlier snapshot: want no read asked for")
	}
}

// The ready messages of the rungs name it where reading them changes
// nothing (4.3's quorum rungs), lowest rung first; where the read-only
// gate stays closed (4.0's), nothing is read and the rung is not asked
// for again.
func TestLostNamedByReadyMessages(t *testing.T) {
	l, _, retired := directSales(t, topology.Quorum)
	key, err := l.Key(time.Hour, "sales")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		release string
		want    string
		peeks   int
	}{{"4.3.6", "sales", 1}, {"4.0.5", "", 0}} {
		v, ok := topology.ParseVersion(tc.release)
		if !ok {
			t.Fatalf("version %s", tc.release)
		}
		o, at := observed(t, retired)
		p := &keyPeeker{keys: map[string][]string{"nsb.v2.delay-level-12": {key, key}}}
		o = ReadUnrouted(t.Context(), o, keyFacts(broker.PeekFacts{Version: v, LimitKnown: true}), p, v)
		if d, held := soleLost(t, o, at); d != tc.want || held != 3 || p.peeks != tc.peeks {
			t.Errorf("%s: lost %q with %d held after %d peeks, want %q with 3 after %d", tc.release, d, held, p.peeks, tc.want, tc.peeks)
		}
		if o.UnroutedUnread() {
			t.Errorf("%s: read once: want no read asked for again", tc.release)
		}
	}
}
