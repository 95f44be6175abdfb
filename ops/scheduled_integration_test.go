package ops

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// scheduledLadder applies a small ladder of type qt with one destination
// and fills it: bulk messages for an hour, plus the named ones with their
// delays, each with message-id and header "job" = its name.
func scheduledLadder(t *testing.T, e live, name string, qt topology.QueueType, bulk int, named map[string]time.Duration) topology.Ladder {
	t.Helper()
	l, err := topology.Ladder{Name: name, Vhost: e.vhost, Layout: "prefix", Unit: time.Second, Levels: 13, Radix: 2, QueueType: qt, Targets: []string{name + ".work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	// Quorum declarations are slow on a loaded machine: more time than
	// the shared helper gives.
	for _, p := range []topology.Plan{{Queues: []topology.Queue{{Name: name + ".work", Durable: true}}}, l.Plan()} {
		if _, err := e.conn.Apply(ctxFor(t, 5*time.Minute), p); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	tr, err := l.Trace(time.Hour, name+".work")
	if err != nil {
		t.Fatal(err)
	}
	for sent := 0; sent < bulk; sent += 1000 {
		d := Delayed{Trace: tr, Body: []byte("bulk"), IDPrefix: "bulk-", Headers: map[string]any{"job": "bulk"}}
		msgs := d.Messages(sent+1, min(1000, bulk-sent), now)
		// A quorum rung declared a moment ago on a loaded 3.10.8 refused
		// whole batches (nack) until its leader settled: try again.
		for try := 0; ; try++ {
			res, err := e.conn.Publish(ctxFor(t, 5*time.Minute), msgs)
			if err == nil && res.Confirmed == len(msgs) {
				break
			}
			if try == 10 || res.Confirmed != 0 {
				t.Fatalf("publish: %+v %v", res, err)
			}
			time.Sleep(time.Second)
		}
	}
	for id, delay := range named {
		tr, err := l.Trace(delay, name+".work")
		if err != nil {
			t.Fatal(err)
		}
		m := Delayed{Trace: tr, Body: []byte("job " + id), Headers: map[string]any{"job": id}}.Messages(1, 1, time.Now())[0]
		m.MessageID, m.CorrelationID = id, "corr-"+id
		e.publish(t, m)
	}
	return l
}

func (e live) planScan(t *testing.T, l topology.Ladder, f Filter) ScanPlan {
	t.Helper()
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool { _, ok := s.Queue(l.Rungs()[0].Queue); return ok })
	p, err := PlanScan(ctxFor(t, 3*time.Minute), e.mgmt, ScanRequest{Ladder: l, Snap: snap, Filter: f, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScheduledFindActAndArrive fills a ladder with thousands of messages
// for an hour and a few named ones, finds one by id (its listed due time
// must match its arrival), then cancels, fires and reschedules (earlier and
// later) others by filter: each must arrive once and when it should, the
// cancelled one must be parked, and the bulk must keep its due times.
func TestScheduledFindActAndArrive(t *testing.T) {
	t.Parallel() // its subtests wait minutes for due times; the rest need not
	for _, qt := range []topology.QueueType{topology.Classic, topology.Quorum} {
		t.Run(string(qt), func(t *testing.T) {
			t.Parallel()
			e := newLive(t)
			name := "sch" + string(qt)[:1]
			// Delays long enough for a loaded machine to act before they are due.
			named := map[string]time.Duration{"find": 75 * time.Second, "cancel": 5 * time.Minute, "fire": 5 * time.Minute, "earlier": 6 * time.Minute, "later": 90 * time.Second}
			const bulk = 3000
			l := scheduledLadder(t, e, name, qt, bulk, named)
			work := name + ".work"
			// Arrivals are timed from the start: a message waiting in the
			// destination queue would look late.
			var mu sync.Mutex
			arrived := map[string][]time.Time{}
			ctx := ctxFor(t, 8*time.Minute)
			ch, err := e.conn.Consume(ctx, work, 50)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for d := range ch {
					mu.Lock()
					arrived[d.MessageID] = append(arrived[d.MessageID], d.Received)
					mu.Unlock()
					_ = d.Ack()
				}
			}()
			arrivedOf := func(id string) int {
				mu.Lock()
				defer mu.Unlock()
				return len(arrived[id])
			}

			// Find one among thousands.
			res, err := e.planScan(t, l, Filter{MessageID: "find"}).Run(ctxFor(t, 2*time.Minute), e.conn, nil)
			if err != nil || res.Matched != 1 || len(res.Messages) != 1 || res.Seen != bulk+len(named) {
				t.Fatalf("find: matched %d of %d (%v)", res.Matched, res.Seen, err)
			}
			found := res.Messages[0]
			if found.Basis == topology.DueNone || !found.Exact || found.CorrelationID != "corr-find" || found.Dest != work {
				t.Fatalf("found %+v", found)
			}
			before, err := e.planScan(t, l, Filter{Where: []string{"job=bulk"}}).Run(ctxFor(t, 2*time.Minute), e.conn, nil)
			if err != nil || before.Matched != bulk {
				t.Fatalf("bulk before: %d %v", before.Matched, err)
			}

			act := func(a Action, f Filter, set func(*ActionRequest)) ActionResult {
				t.Helper()
				req := ActionRequest{Scan: e.planScan(t, l, f), Action: a}
				if set != nil {
					set(&req)
				}
				p, err := PlanAction(req, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				r, err := p.Run(ctxFor(t, 2*time.Minute), e.conn, nil)
				if err != nil || r.Acted != 1 || r.Kept != 0 || r.Unknown != 0 {
					t.Fatalf("%s: %+v %v", a, r, err)
				}
				return r
			}
			act(ActCancel, Filter{Where: []string{"job=cancel"}}, nil)
			firedAt := time.Now()
			act(ActFire, Filter{CorrelationID: "corr-fire"}, nil)
			earlierAt := time.Now()
			act(ActReschedule, Filter{MessageID: "earlier"}, func(r *ActionRequest) { r.Delay = 5 * time.Second })
			res, err = e.planScan(t, l, Filter{MessageID: "later"}).Run(ctxFor(t, 2*time.Minute), e.conn, nil)
			if err != nil || res.Matched != 1 {
				t.Fatalf("later before reschedule: %+v %v", res.Messages, err)
			}
			laterDue := res.Messages[0].Latest.Add(30 * time.Second)
			act(ActReschedule, Filter{MessageID: "later"}, func(r *ActionRequest) { r.At = laterDue })

			// The rescheduled ones are dated by their new headers.
			res, err = e.planScan(t, l, Filter{MessageID: "later"}).Run(ctxFor(t, 2*time.Minute), e.conn, nil)
			if err != nil || res.Matched != 1 || res.Messages[0].Basis == topology.DueNone {
				t.Fatalf("later after reschedule: %+v %v", res.Messages, err)
			}
			laterListed := res.Messages[0]

			for arrivedOf("find") == 0 || arrivedOf("later") == 0 || arrivedOf("earlier") == 0 || arrivedOf("fire") == 0 {
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
					t.Fatalf("arrivals so far: %v", arrived)
				}
			}
			// Anything else due in this span would have come by now.
			time.Sleep(2 * time.Second)
			mu.Lock()
			defer mu.Unlock()
			for id, at := range arrived {
				if len(at) != 1 || named[id] == 0 {
					t.Errorf("%s arrived %d times (want once, and only named messages)", id, len(at))
				}
			}
			if _, ok := arrived["cancel"]; ok {
				t.Error("the cancelled message arrived")
			}
			slack := l.Unit + 30*time.Second // a loaded machine's lateness
			check := func(id string, notBefore, notAfter time.Time) {
				at := arrived[id][0]
				t.Logf("%s: arrived %s after its earliest due time", id, at.Sub(notBefore).Round(time.Millisecond))
				if at.Before(notBefore.Add(-time.Second)) || at.After(notAfter.Add(slack)) {
					t.Errorf("%s arrived at %s, want in [%s, %s + %s]", id, at.Format(time.RFC3339Nano), notBefore.Format(time.RFC3339Nano), notAfter.Format(time.RFC3339Nano), slack)
				}
			}
			check("find", found.Earliest, found.Latest)
			check("fire", firedAt, firedAt)
			check("earlier", earlierAt.Add(5*time.Second-time.Second), time.Now())
			check("later", laterListed.Earliest, laterListed.Latest)
			if laterListed.Earliest.Before(laterDue.Add(-time.Second)) {
				t.Errorf("later listed due %s, rescheduled for %s", laterListed.Earliest, laterDue)
			}

			parked := 0
			for {
				d, ok, err := e.conn.Get(ctx, DefaultPark(l), true)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				parked++
				if d.MessageID != "cancel" || d.Headers[topology.HeaderReason] == nil || d.Headers[topology.HeaderQueue] == nil {
					t.Errorf("parked %s %v", d.MessageID, d.Headers)
				}
			}
			if parked != 1 {
				t.Errorf("%d parked, want the cancelled one", parked)
			}

			// The bulk kept its due times: none lost, none moved on.
			after, err := e.planScan(t, l, Filter{Where: []string{"job=bulk"}}).Run(ctxFor(t, 2*time.Minute), e.conn, nil)
			if err != nil || after.Matched != bulk {
				t.Fatalf("bulk after: %d %v", after.Matched, err)
			}
			if b, a := before.Messages[0], after.Messages[0]; a.Latest.Before(b.Earliest) || a.Earliest.Sub(b.Latest) > time.Second {
				t.Errorf("bulk due %s..%s before, %s..%s after", b.Earliest, b.Latest, a.Earliest, a.Latest)
			}
		})
	}
}

// TestScheduledRefusesBadActions: a time in the past, a delay past the
// ladder's maximum, no filter, a bad --where; and a read-only connection
// moves nothing.
func TestScheduledRefusesBadActions(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := scheduledLadder(t, e, "schbad", topology.Classic, 10, map[string]time.Duration{"x": time.Minute})
	p := e.planScan(t, l, Filter{MessageID: "x"})
	now := time.Now()
	for _, c := range []struct {
		req   ActionRequest
		field string
	}{
		{ActionRequest{Scan: p, Action: ActReschedule, At: now.Add(-time.Minute)}, "at"},
		{ActionRequest{Scan: p, Action: ActReschedule, Delay: l.MaxDelay() + time.Second}, "delay"},
		{ActionRequest{Scan: p, Action: ActReschedule}, "delay"},
		{ActionRequest{Scan: p, Action: "zap"}, "action"},
		{ActionRequest{Scan: e.planScan(t, l, Filter{}), Action: ActFire}, "action"},
		{ActionRequest{Scan: p, Action: ActCancel, Park: l.Rungs()[0].Queue}, "park"},
	} {
		_, err := PlanAction(c.req, now)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want a refusal of %s", c.req.Action, err, c.field)
		}
	}
	if _, err := (Filter{Where: []string{"novalue"}}).Compile(); err == nil {
		t.Error("a bad --where term compiled")
	}

	cfg := e.cfg
	cfg.ReadOnly = true
	ro, err := broker.Dial(ctxFor(t, 10*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	plan, err := PlanAction(ActionRequest{Scan: p, Action: ActFire}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Run(ctxFor(t, time.Minute), ro, nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("read-only fire: %v", err)
	}
	res, err := p.Run(ctxFor(t, time.Minute), ro, nil)
	if err != nil || res.Matched != 1 || res.Seen != 11 {
		t.Errorf("read-only scan: %d of %d, %v", res.Matched, res.Seen, err)
	}
}
