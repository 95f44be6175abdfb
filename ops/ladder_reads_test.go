package ops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// halfWrapped passes LadderSnapshot on but not LadderStats or QueueStats:
// the wrapper that used to read the whole vhost without a word.
type halfWrapped struct{ recorded }

func (h *halfWrapped) LadderSnapshot(ctx context.Context, _ topology.Scope) (topology.Snapshot, error) {
	return h.Snapshot(ctx, "/")
}

func TestAPartialWrapperFailsTheReadInsteadOfReadingTheVhost(t *testing.T) {
	snap := topology.Snapshot{Vhost: "/", Queues: []topology.Queue{{Name: "a"}}}
	r := Read{Scope: Scope{Vhost: "/", Ladders: []string{"a"}}, Snapshot: true, Objects: topology.NamedScope("/", []string{"a"})}
	h := &halfWrapped{recorded{snaps: []topology.Snapshot{snap}}}
	got := r.Do(context.Background(), h, time.Now)
	if got.Err == nil || !strings.Contains(got.Err.Error(), "LadderStats false") || h.snapshots != 0 {
		t.Fatalf("partial wrapper: %v, %d whole snapshots", got.Err, h.snapshots)
	}
	// An inspector with no reads by name at all fails a scoped read too,
	// and reads the whole vhost only when the read asks for it.
	rec := &recorded{snaps: []topology.Snapshot{snap}}
	if got := r.Do(context.Background(), rec, time.Now); got.Err == nil || !strings.Contains(got.Err.Error(), "ReachVhost") || rec.snapshots != 0 {
		t.Fatalf("whole reader asked for a scoped read: %v, %d snapshots", got.Err, rec.snapshots)
	}
	r.Reach = ReachVhost
	if got := r.Do(context.Background(), rec, time.Now); got.Err != nil || got.Scoped || rec.snapshots != 1 {
		t.Fatalf("whole reader: %v, scoped %v, %d snapshots", got.Err, got.Scoped, rec.snapshots)
	}
}
