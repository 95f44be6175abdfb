package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// A small ladder delivers into a destination whose one consumer acks
// slowly: its publish rate reads 0 (dead-lettering is not publishing),
// yet after a few readings the destination's arrivals and what its
// consumer took show, and status says them, in text and in --json.
func TestStatusDestinationFlowOnTheBroker(t *testing.T) {
	t.Parallel()
	_, cfg := brokerEnv(t)
	c := dial(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := topology.Ladder{Name: "df", Vhost: cfg.Vhost, Layout: "prefix", Unit: time.Second, Levels: 5, Radix: 2, Targets: []string{"df.work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []topology.Plan{{Queues: []topology.Queue{{Name: "df.work", Durable: true}}}, l.Plan()} {
		if _, err := c.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	ch := brokertest.RawChannel(t, cfg)
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume("df.work", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for d := range ds {
			time.Sleep(50 * time.Millisecond)
			_ = d.Ack(false)
		}
	}()
	// Due from 2s to 20s: arrivals spread over the readings, faster than
	// the consumer takes them at first.
	var msgs []broker.Message
	for delay := 2 * time.Second; delay <= 20*time.Second; delay += 2 * time.Second {
		tr, err := l.Trace(delay, "df.work")
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, ops.Delayed{Trace: tr, Body: []byte("x")}.Messages(0, 80, time.Now())...)
	}
	if res, err := c.Publish(ctx, msgs); err != nil || res.Confirmed != len(msgs) {
		t.Fatalf("publish: %+v %v", res, err)
	}
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ops.ReadLadders(ctx, m, ops.StatusRequest{Vhost: cfg.Vhost}.Scope())
	if err != nil {
		t.Fatal(err)
	}
	// Read as the console does, until the flow shows both rates and the
	// destination holds messages (the statistics come every 5s, a new
	// quorum queue's depths after its first emission), a bounded number
	// of readings.
	flow := func(rep health.Report) (health.DestFlow, bool) {
		for _, lr := range rep.Ladders {
			for _, d := range lr.Drain.Dests {
				if d.Queue == "df.work" {
					return d, true
				}
			}
		}
		return health.DestFlow{}, false
	}
	var rep health.Report
	reads := 1
	for ; reads < 40; reads++ {
		if err := ops.Sleep(ctx, ops.StallSampleEvery); err != nil {
			t.Fatal(err)
		}
		if o, _, err = o.Refresh(ctx, m, time.Now); err != nil {
			t.Fatal(err)
		}
		rep = o.Report(o.At())
		if d, ok := flow(rep); ok && d.In > 0 && d.Taken > 0 && d.Depth > 0 {
			break
		}
	}
	d, ok := flow(rep)
	if !ok || d.In <= 0 || d.Taken <= 0 || d.Done || reads < 2 {
		t.Fatalf("after %d readings: %+v %v; want arrivals and taken", reads, d, ok)
	}
	out := ui.StatusText(rep, nil, cfg.Vhost, false, 100)
	if want := "Destination df.work: " + health.DestFlowText(d); !strings.Contains(out, want) {
		t.Errorf("status does not say %q:\n%s", want, out)
	}
	raw, err := json.Marshal(toJSONStatusReport(rep, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Ladders []struct {
			Drain struct {
				Destinations []struct {
					Queue string  `json:"queue"`
					In    float64 `json:"in_per_s"`
					Taken float64 `json:"taken_per_s"`
				} `json:"destinations"`
			} `json:"drain"`
		} `json:"ladders"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Ladders) != 1 || len(got.Ladders[0].Drain.Destinations) != 1 {
		t.Fatalf("--json: %s", raw)
	}
	if j := got.Ladders[0].Drain.Destinations[0]; j.Queue != "df.work" || j.In <= 0 || j.Taken <= 0 {
		t.Errorf("--json destination %+v", j)
	}
	t.Logf("%s after %d readings:\n%s", releaseOf(t, cfg), reads, out)
}
