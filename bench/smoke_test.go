package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// logWriter sends the run's progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestSmoke runs every phase of the benchmark briefly against the real
// broker. It checks correctness only (every message confirmed and delivered
// once, none early, a report produced): timings on a shared CI machine are
// not assertions.
func TestSmoke(t *testing.T) {
	env := brokertest.Require(t)
	opts := SmokeOptions()
	opts.Log = logWriter{t}
	// The default ladder's shape and its other layout: two quorum designs,
	// so the binary quorum design would add nothing but time.
	opts.Default = &topology.Ladder{Layout: "direct", Radix: 16, QueueType: topology.Quorum}
	opts.Quorum = false
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, env.Config, env.Mgmt, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	designs, _ := opts.withDefaults().designs()
	if len(rep.Limit) != 1 || len(rep.Throughput) != len(designs) {
		t.Fatalf("%d limit phases and %d designs, want 1 and %d", len(rep.Limit), len(rep.Throughput), len(designs))
	}
	check := func(p Phase) {
		t.Helper()
		if p.Published == 0 || p.Delivered != p.Published || p.Confirmed != p.Published || p.Early != 0 || p.Duplicates != 0 || p.Lost != 0 {
			t.Errorf("%s (offered %v): published %d, confirmed %d, delivered %d, early %d, duplicates %d, lost %d",
				p.Name, p.OfferedPerS, p.Published, p.Confirmed, p.Delivered, p.Early, p.Duplicates, p.Lost)
		}
	}
	check(rep.Limit[0])
	if len(rep.Topic) != 1 {
		t.Fatalf("%d topic reference phases, want 1", len(rep.Topic))
	}
	check(rep.Topic[0])
	for _, d := range rep.Throughput {
		check(d.Rounds[0])
		// Hops counted on arrival (x-death) must match the digits sent.
		if p := d.Rounds[0]; p.MeanHops == 0 || p.MaxHops > d.Levels {
			t.Errorf("%s: mean hops %.2f, max %d for %d levels", d.Name, p.MeanHops, p.MaxHops, d.Levels)
		}
	}
	wantPunct := len(designs) * len(opts.Loads)
	if len(rep.Punctuality) != wantPunct {
		t.Errorf("%d punctuality rows, want %d", len(rep.Punctuality), wantPunct)
	}
	for _, p := range rep.Punctuality {
		if len(p.Rounds) != 1 {
			t.Errorf("%s at %s: %d rounds, want 1", p.Design, p.Offered, len(p.Rounds))
		}
		if p.OfferedPerS > 0 {
			for _, rp := range p.Rounds {
				check(rp)
			}
		}
	}
	v, _ := topology.ParseVersion(rep.Broker.RabbitMQ)
	// Measured on 3.10.8: a direct quorum ladder runs (no retry happens in
	// a benchmark) and is labelled unsafe; from 3.13.3 it is safe.
	wantUnsafe := 0
	if v.LosesBCCOnDeadLetterRetry() {
		wantUnsafe = 1
	}
	if len(rep.Unsafe) != wantUnsafe || (wantUnsafe == 1 && (rep.Unsafe[0].Design != "direct r16 quorum" || !rep.Unsafe[0].Measured)) {
		t.Errorf("RabbitMQ %s: unsafe designs %+v, want %d (direct r16 quorum, measured)", v, rep.Unsafe, wantUnsafe)
	}
	md := rep.Markdown()
	for _, want := range []string{"### Throughput", "| prefix |", "| suffix |", "| prefix r16 |", "| direct r16 |", "reference: the 8-word keys", "### Punctuality", "### Targets", "none before its delay",
		"| direct r16 quorum (**the default**)", "| prefix r16 quorum (the default's shape, **other layout**)", "### Direct or prefix on the default ladder", "| throughput at saturation, msg/s |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
}
