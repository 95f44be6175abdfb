package topology

import (
	"strings"
	"testing"
	"time"
)

func lostLadder(t *testing.T, layout string, targets ...string) Ladder {
	t.Helper()
	l := Ladder{Name: DefaultName, Layout: layout, Unit: time.Second, Levels: 4, Radix: 2, QueueType: Quorum, Targets: targets}
	if layout == "celery" || layout == "nsb" {
		l.Levels = 28
	}
	n, err := l.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// withTarget adds what an application declares: the destination queue
// (and for Celery the exchange of the same name).
func withTarget(s Snapshot, layout, q string) Snapshot {
	s.Queues = append(s.Queues, Queue{Name: q, Durable: true})
	if layout == "celery" {
		s.Exchanges = append(s.Exchanges, Exchange{Name: q, Type: "topic", Durable: true})
	}
	return s
}

func without(s Snapshot, queue string) Snapshot {
	var out Snapshot
	out.Vhost, out.Exchanges = s.Vhost, s.Exchanges
	for _, q := range s.Queues {
		if q.Name != queue {
			out.Queues = append(out.Queues, q)
		}
	}
	for _, b := range s.Bindings {
		if !(b.DestinationType == ToQueue && b.Destination == queue) {
			out.Bindings = append(out.Bindings, b)
		}
	}
	return out
}

func TestLostRoutes(t *testing.T) {
	for _, layout := range []string{"prefix", "direct", "celery", "nsb"} {
		t.Run(layout, func(t *testing.T) {
			l := lostLadder(t, layout, "emails", "celery")
			snap := withTarget(withTarget(l.Plan().Snapshot(), layout, "emails"), layout, "celery")
			if got := l.LostRoutes(snap); len(got) != 0 {
				t.Fatalf("every route resolves, got %+v", got)
			}
			gone := without(snap, "emails")
			got := l.LostRoutes(gone)
			if len(got) != 1 || got[0].Dest != "emails" || got[0].Gone != "queue" {
				t.Fatalf("lost routes = %+v, want emails' queue gone", got)
			}
			if !strings.Contains(got[0].Evidence(), "queue emails is gone") || got[0].Restore == "" {
				t.Errorf("evidence %q, restore %q", got[0].Evidence(), got[0].Restore)
			}
			switch layout {
			case "prefix", "direct":
				if !strings.Contains(got[0].Restore, "rungs apply --ladder "+l.Name+" --target emails") {
					t.Errorf("restore = %q", got[0].Restore)
				}
			case "celery":
				if !strings.Contains(got[0].Restore, "source=emails destination=emails routing_key='#.emails'") {
					t.Errorf("restore = %q", got[0].Restore)
				}
			case "nsb":
				if !strings.Contains(got[0].Restore, "source=nsb.v2.delay-delivery destination=emails routing_key='#.emails'") {
					t.Errorf("restore = %q", got[0].Restore)
				}
			}
		})
	}
}

// A destination read from a message (an unroutable queue's keys) that
// the ladder no longer binds is lost too; one it routes is not.
func TestLostRoutesFromMessages(t *testing.T) {
	l := lostLadder(t, "prefix")
	snap := withTarget(l.Plan().Snapshot(), "prefix", "kept")
	l2 := l
	l2.Targets = []string{"kept"}
	snap = withTarget(l2.Plan().Snapshot(), "prefix", "kept")
	got := l.LostRoutes(snap, "jobs.q", "kept")
	if len(got) != 1 || got[0].Dest != "jobs.q" || got[0].Gone != "queue" {
		t.Fatalf("lost = %+v", got)
	}
}

// A delivery exchange that binds nothing at all (the only endpoint bound
// straight to it, then deleted) loses every destination, unnamed.
func TestLostRoutesDeliveryBindsNothing(t *testing.T) {
	for _, layout := range []string{"celery", "nsb"} {
		l := lostLadder(t, layout)
		got := l.LostRoutes(l.Plan().Snapshot())
		if len(got) != 1 || got[0].Dest != "" || !strings.Contains(got[0].Evidence(), "binds no destination") || LostNames(got) != "every destination" {
			t.Errorf("%s: %+v", layout, got)
		}
	}
	if got := lostLadder(t, "prefix").LostRoutes(lostLadder(t, "prefix").Plan().Snapshot()); len(got) != 0 {
		t.Errorf("prefix delivers to its done queue: %+v", got)
	}
}
