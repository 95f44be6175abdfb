package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// replayScope is a vhost holding ladder jobs, a dead-letter queue dlq
// with 7 messages and a queue work.
func replayScope(t *testing.T) (*BrokerView, topology.Ladder) {
	t.Helper()
	l, err := topology.Ladder{Name: "jobs", Vhost: "/", Unit: time.Second, Levels: 4, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := WithQueues(l.Plan().Snapshot(), topology.Queue{Name: "dlq", Stats: topology.QueueStats{Ready: 7}}, topology.Queue{Name: "work"})
	snap.Vhost = "/"
	return NewBrokerView(snap), l
}

func TestReplayEntryPoint(t *testing.T) {
	scope, l := replayScope(t)
	into := func(shape bool) *ReplayInto {
		return &ReplayInto{Spec: LadderSpec{Name: "jobs", Layout: l.Layout, Unit: time.Second}, Query: LadderQuery{Name: "jobs"}, ShapeGiven: shape,
			Version: func() (topology.Version, error) { return topology.Version{}, nil }}
	}
	intoGone := into(false)
	intoGone.Spec.Name, intoGone.Query.Name = "gone", "gone"
	cases := []struct {
		name     string
		req      ReplayRequest
		question string
		want     func(error) bool
	}{
		{"to a queue", ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "work"}, Limit: 5, Scope: scope},
			"replay about 7 message(s) from dlq to queue work (at most 5)", nil},
		{"read-only refuses", ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "work"}, ReadOnly: true, Scope: scope},
			"", func(err error) bool { return errors.Is(err, broker.ErrReadOnly) }},
		{"read-only dry run", ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "work"}, ReadOnly: true, DryRun: true, Scope: scope},
			"replay about 7 message(s) from dlq to queue work", nil},
		{"a bad limit names its field", ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "work"}, Limit: -1, Scope: scope},
			"", func(err error) bool { var fe *FieldError; return errors.As(err, &fe) && fe.Field == "limit" }},
		{"a missing destination", ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "nope"}, Scope: scope},
			"", func(err error) bool { var nq *NoQueueError; return errors.As(err, &nq) && nq.Queue == "nope" }},
		{"no ladder to go into", ReplayRequest{Source: "dlq", To: ReplayTo{Delay: time.Minute}, Scope: scope},
			"", IsInputError},
		{"into the ladder found", ReplayRequest{Source: "dlq", To: ReplayTo{Into: into(false), Delay: 3 * time.Second, Dest: "work"}, Scope: scope},
			"replay about 7 message(s) from dlq into ladder jobs: 3s later to work", nil},
		{"into a ladder not there", ReplayRequest{Source: "dlq", To: ReplayTo{Into: intoGone, Delay: time.Second}, Scope: scope},
			"", func(err error) bool { return err.Error() == `no ladder "gone" in vhost /; nothing was replayed` }},
		{"unread, a ladder's shape unknown", ReplayRequest{Source: "dlq", To: ReplayTo{Into: into(false), Delay: time.Second}, Unreadable: errors.New("down")},
			"", func(err error) bool {
				var su *ShapeUnknownError
				return errors.As(err, &su) && su.Err.Error() == "down"
			}},
		{"unread, the shape given", ReplayRequest{Source: "dlq", To: ReplayTo{Into: into(true), Delay: time.Second}, Unreadable: errors.New("down")},
			"replay the message(s) from dlq into ladder jobs", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Replay(context.Background(), nil, c.req)
			if c.want != nil {
				if err == nil || !c.want(err) {
					t.Fatalf("error %v (%T)", err, err)
				}
				return
			}
			if err != nil || !strings.HasPrefix(p.Question(), c.question) || p.Word() != "dlq" {
				t.Fatalf("%q, %q: %v", p.Question(), p.Word(), err)
			}
			if (c.req.Scope == nil) != (p.Unchecked != nil) || p.Peek.Queue.Name != "dlq" {
				t.Errorf("unchecked %v, peek %+v", p.Unchecked, p.Peek)
			}
		})
	}
}

func TestReplayPreviewCount(t *testing.T) {
	for _, c := range []struct{ limit, want int }{{0, ReplayDryRunCount}, {3, 3}, {broker.MaxPeek + 1, broker.MaxPeek}} {
		p := ReplayPlan{Options: broker.MoveOptions{Limit: c.limit}}
		if got := p.PreviewCount(); got != c.want {
			t.Errorf("limit %d previews %d, want %d", c.limit, got, c.want)
		}
	}
}

// moved is a Mover that reports res.
type moved struct{ res broker.MoveProgress }

func (m moved) Move(context.Context, broker.MoveOptions) (broker.MoveProgress, error) {
	return m.res, nil
}

func TestReplayRunOutcome(t *testing.T) {
	p := ReplayPlan{Options: broker.MoveOptions{Source: "dlq"}}
	if _, err := p.Run(context.Background(), moved{broker.MoveProgress{Moved: 3}}, nil); err != nil {
		t.Errorf("all moved: %v", err)
	}
	if _, err := p.Run(context.Background(), moved{broker.MoveProgress{Moved: 3, Kept: 2}}, nil); err == nil || err.Error() != "2 message(s) stayed on dlq (reasons above)" {
		t.Errorf("some stayed: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ie *InterruptedError
	if _, err := p.Run(ctx, moved{broker.MoveProgress{Moved: 1, Parked: 1}}, nil); !errors.As(err, &ie) || err.Error() != "replay interrupted after 2 message(s); the rest stay on dlq" {
		t.Errorf("interrupted: %v", err)
	}
}
