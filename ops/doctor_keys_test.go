package ops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

type keyFacts broker.PeekFacts

func (f keyFacts) PeekFacts(context.Context, string, topology.Queue) (broker.PeekFacts, error) {
	return broker.PeekFacts(f), nil
}

// keyPeeker holds routing keys by queue and counts the peeks.
type keyPeeker struct {
	keys  map[string][]string
	peeks int
}

func (p *keyPeeker) Peek(_ context.Context, queue string, n int) (broker.PeekResult, error) {
	p.peeks++
	res := broker.PeekResult{Queue: queue}
	for i, k := range p.keys[queue] {
		if i == n {
			break
		}
		res.Messages = append(res.Messages, broker.PeekedMessage{Delivery: broker.Delivery{RoutingKey: k}, Position: i})
	}
	return res, nil
}

// doctor reads the heads of a Celery ladder's non-empty rungs only where
// the read-only gate lets it, and words what it found.
func TestSampleKeys(t *testing.T) {
	l, err := topology.Ladder{Layout: "celery", Targets: []string{"emails"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	key, err := l.Key(600*time.Second, "emails")
	if err != nil {
		t.Fatal(err)
	}
	stack := func(k string, n int) string {
		for i := 0; i < n; i++ {
			k = k[:2*l.Levels] + strings.Repeat("0.", l.Levels) + k[2*l.Levels:]
		}
		return k
	}
	snapOf := func(qt topology.QueueType) topology.Snapshot {
		s := l.Plan().Snapshot()
		for i, q := range s.Queues {
			args := topology.Args{}
			for k, v := range q.Args {
				args[k] = v
			}
			args["x-queue-type"] = string(qt)
			s.Queues[i].Args = args
			if q.Name == "celery_delayed_9" || q.Name == "celery_delayed_3" {
				s.Queues[i].Stats.Ready = 3
			}
		}
		return s
	}
	p := &keyPeeker{keys: map[string][]string{
		"celery_delayed_9": {key, stack(key, 1), stack(key, 3)},
		"celery_delayed_3": {stack(key, 2)},
		"celery_delayed_4": {stack(key, 3)}, // empty by its statistics: not read
	}}
	s := SampleKeys(context.Background(), nil, p, l, snapOf(topology.Classic), nil)
	if s.Err != nil || s.Unread != "" || s.Sampled != 4 || s.Rungs != 2 || s.Stacked != 3 || s.FewestRetriesLeft != 0 || p.peeks != 2 {
		t.Fatalf("classic: %+v after %d peeks", s, p.peeks)
	}
	if f := celeryKeyFinding("delays", s); f.Status != FindingProblem || !strings.Contains(f.Text, "3 of the 4 routing keys read at the heads of 2 rungs carry stacked") ||
		!strings.Contains(f.Text, "cannot be retried with a delay again") {
		t.Errorf("classic: %+v", f)
	}

	// Quorum rungs before 4.3 with RabbitMQ 4's default limit: the
	// read-only gate refuses, and nothing is read.
	p.peeks = 0
	v40 := topology.Version{Major: 4, Minor: 0, Patch: 5}
	s = SampleKeys(context.Background(), keyFacts{Version: v40, Limit: 20, LimitKnown: true}, p, l, snapOf(topology.Quorum), nil)
	if s.Unread == "" || s.Sampled != 0 || p.peeks != 0 {
		t.Fatalf("quorum on 4.0: %+v after %d peeks", s, p.peeks)
	}
	if f := celeryKeyFinding("delays", s); f.Status != FindingInfo || !strings.Contains(f.Text, "not read") || !strings.Contains(f.Text, "rungs scheduled --ladder celery") {
		t.Errorf("quorum on 4.0: %+v", f)
	}
	// On 4.3 a read changes nothing a limit counts: read.
	v43 := topology.Version{Major: 4, Minor: 3, Patch: 6}
	s = SampleKeys(context.Background(), keyFacts{Version: v43, Limit: 20, LimitKnown: true}, p, l, snapOf(topology.Quorum), nil)
	if s.Unread != "" || s.Sampled != 4 || s.Stacked != 3 {
		t.Errorf("quorum on 4.3: %+v", s)
	}

	// Unstacked keys, one retry left, and nothing to say.
	for _, tc := range []struct {
		s      KeySample
		status string
		text   string
	}{
		{KeySample{Ladder: "celery", Sampled: 5, Rungs: 1}, FindingOK, "no stacked delay prefix in the 5 routing keys read at the heads of 1 rung"},
		{KeySample{Ladder: "celery", Sampled: 5, Rungs: 1, Stacked: 1, FewestRetriesLeft: 1}, FindingWarn, "can take 1 more retry with a delay"},
		{KeySample{Ladder: "celery"}, "", ""},
	} {
		if f := celeryKeyFinding("delays", tc.s); f.Status != tc.status || !strings.Contains(f.Text, tc.text) {
			t.Errorf("%+v: %+v", tc.s, f)
		}
	}
	// Another layout has no stacked keys: nothing read.
	prefix, _ := topology.Ladder{Name: "p", Layout: "prefix", Levels: 3, Radix: 2}.Normalize()
	p.peeks = 0
	if s := SampleKeys(context.Background(), nil, p, prefix, prefix.Plan().Snapshot(), nil); s.Sampled != 0 || p.peeks != 0 {
		t.Errorf("prefix ladder: %+v", s)
	}
}
