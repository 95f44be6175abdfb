package ops

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func ladder(t *testing.T) topology.Ladder {
	t.Helper()
	l, err := topology.Ladder{Name: "jobs", Levels: 4, Radix: 2, Unit: time.Second, Targets: []string{"jobs.work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDelayedMessages(t *testing.T) {
	l := ladder(t)
	tr, err := l.Trace(5*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	caller := map[string]any{"tenant": "acme"}
	now := time.Unix(1700000000, 0)
	d := Delayed{Trace: tr, Body: []byte("hi"), Headers: caller, Persistent: true, IDPrefix: "m"}
	msgs := d.Messages(3, 2, now)
	if len(msgs) != 2 || msgs[0].MessageID != "m3" || msgs[1].MessageID != "m4" {
		t.Fatalf("messages %+v", msgs)
	}
	m := msgs[0]
	if m.Exchange != tr.Exchange || m.RoutingKey != tr.Key || m.ContentType != "text/plain" || !m.Persistent || !m.Timestamp.Equal(now) ||
		m.Headers["tenant"] != "acme" || m.Headers[topology.HeaderDelayMS] != int64(5000) {
		t.Errorf("message %+v", m)
	}
	if _, ok := caller[topology.HeaderDelayMS]; ok {
		t.Error("Messages changed the caller's headers")
	}
	if got := ContentType("", []byte{0xff, 0xfe}); got != "application/octet-stream" {
		t.Errorf("binary body: %s", got)
	}
	if got := ContentType("application/json", nil); got != "application/json" {
		t.Errorf("given type: %s", got)
	}
}

func TestPlanReplay(t *testing.T) {
	l := ladder(t)
	snap := l.Plan().Snapshot()
	g := topology.NewGraph(snap)
	found := topology.Discover(snap)

	r, err := PlanReplay("jobs.work.parked", ReplayTo{Queue: "jobs.work"}, found, g)
	if err != nil || r.Describe != "to queue jobs.work" {
		t.Fatalf("to queue: %+v %v", r, err)
	}
	if route, _ := r.Router(broker.Delivery{}); route.RoutingKey != "jobs.work" || route.Exchange != "" {
		t.Errorf("to queue routes %+v", route)
	}
	if r, err = PlanReplay("jobs.work.parked", ReplayTo{Origin: true}, found, g); err != nil || r.Describe != ReplayToOrigin {
		t.Errorf("to origin: %+v %v", r, err)
	}

	r, err = PlanReplay("jobs.work.parked", ReplayTo{Ladder: &l, Delay: 5 * time.Second}, found, g)
	if err != nil || r.Trace == nil || !strings.HasPrefix(r.Describe, "into ladder jobs: 5s later to jobs.done") {
		t.Fatalf("into ladder: %+v %v", r, err)
	}
	if route, _ := r.Router(broker.Delivery{}); route.RoutingKey != r.Trace.Key || !route.SaveDeath {
		t.Errorf("into ladder routes %+v", route)
	}

	if _, err := PlanReplay("jobs.done", ReplayTo{Ladder: &l, Delay: time.Second}, found, g); err == nil || !strings.Contains(err.Error(), "would never end") {
		t.Errorf("a loop was planned: %v", err)
	}

	bare := snap
	bare.Bindings = nil
	_, err = PlanReplay("jobs.work.parked", ReplayTo{Ladder: &l, Delay: time.Second}, found, topology.NewGraph(bare))
	var re *RouteError
	if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), "would not reach jobs.done") {
		t.Errorf("unroutable ladder: %v", err)
	}
	// Without the management API nothing is checked.
	if _, err := PlanReplay("jobs.work.parked", ReplayTo{Ladder: &l, Delay: time.Second}, nil, nil); err != nil {
		t.Errorf("unchecked: %v", err)
	}
}

func TestDelayedCheck(t *testing.T) {
	long := strings.Repeat("x", topology.MaxShortString)
	cases := map[string]struct {
		d     Delayed
		count int
		field string
	}{
		"no messages":          {Delayed{}, 0, "count"},
		"long content type":    {Delayed{ContentType: long + "x"}, 1, "content-type"},
		"long ids":             {Delayed{IDPrefix: long}, 10, "id-prefix"},
		"binary said text":     {Delayed{ContentType: "application/json", Body: []byte{0xff}}, 1, "body"},
		"binary said charset":  {Delayed{ContentType: "x/y; charset=UTF-8", Body: []byte{0xff}}, 1, "body"},
		"binary, binary type":  {Delayed{ContentType: "application/octet-stream", Body: []byte{0xff}}, 1, ""},
		"binary, type guessed": {Delayed{Body: []byte{0xff}}, 1, ""},
		"ids that fit":         {Delayed{IDPrefix: long[:250]}, 9999, ""},
	}
	for name, tc := range cases {
		err := tc.d.Check(tc.count)
		var fe *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: %v, want a %s field error", name, err, tc.field)
		}
	}
}

// TestPurgeRequestQueues checks that what a purge request names to read
// is what PlanPurge plans from: every queue it empties or leaves alone.
func TestPurgeRequestQueues(t *testing.T) {
	l := ladder(t)
	req := PurgeRequest{Ladder: l}
	names := req.Queues()
	snap := l.Plan().Snapshot()
	snap.Queues = append(snap.Queues, topology.Queue{Name: "jobs.work"}) // the target, declared by its worker
	p, err := PlanPurge(snap, nil, topology.Version{}, req)
	if err != nil {
		t.Fatal(err)
	}
	want := append(p.Names(), p.Untouched...)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("Queues() = %v, PlanPurge reads %v", names, want)
	}
	if got := (PurgeRequest{Queue: "q"}).Queues(); len(got) != 1 || got[0] != "q" {
		t.Errorf("a queue's request names %v", got)
	}
}
