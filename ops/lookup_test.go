package ops

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// byName reads queues by name from a recorded snapshot, as
// broker.Management.QueueStats does: absent ones left out.
type byName struct {
	recorded
	asked [][]string
}

func (b *byName) QueueStats(_ context.Context, _ string, names []string) ([]topology.Queue, error) {
	b.asked = append(b.asked, names)
	if b.err != nil {
		return nil, b.err
	}
	var out []topology.Queue
	for _, n := range names {
		if q, ok := b.take().Queue(n); ok {
			out = append(out, q)
		}
	}
	return out, nil
}

func TestLookupQueues(t *testing.T) {
	snap := topology.Snapshot{Vhost: "/", Queues: []topology.Queue{{Name: "a"}, {Name: "b", Stats: topology.QueueStats{Ready: 3}}, {Name: "c"}}}
	ctx := context.Background()
	br := &byName{recorded: recorded{snaps: []topology.Snapshot{snap}}}
	got, err := LookupQueues(ctx, br, "/", []string{"b", "gone"})
	if err != nil || len(got) != 1 || got[0].Stats.Ready != 3 || br.stat != 0 || !reflect.DeepEqual(br.asked, [][]string{{"b", "gone"}}) {
		t.Fatalf("by name: %+v, %v; asked %v, %d listings", got, err, br.asked, br.stat)
	}
	br.err = errors.New("connection refused")
	if _, err := LookupQueues(ctx, br, "/", []string{"b"}); err == nil || err.Error() != "look up queue b: connection refused" {
		t.Errorf("a failed read: %v", err)
	}

	with := WithQueues(topology.Snapshot{Vhost: "/", Queues: snap.Queues[:2]}, topology.Queue{Name: "b"}, topology.Queue{Name: "x"})
	if names := queueNames(with.Queues); !reflect.DeepEqual(names, []string{"a", "b", "x"}) || with.Queues[1].Stats.Ready != 0 {
		t.Errorf("WithQueues: %v, b ready %d", names, with.Queues[1].Stats.Ready)
	}
	if len(snap.Queues) != 3 || snap.Queues[1].Stats.Ready != 3 {
		t.Error("WithQueues changed the snapshot it was given")
	}
}

func queueNames(qs []topology.Queue) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Name)
	}
	return out
}
