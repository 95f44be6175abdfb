package ops

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// statusSnapInsp answers every read with one snapshot.
type statusSnapInsp struct{ snap topology.Snapshot }

func (s statusSnapInsp) Snapshot(context.Context, string) (topology.Snapshot, error) {
	return s.snap, nil
}

func (s statusSnapInsp) Stats(context.Context, string) ([]topology.Queue, error) {
	return s.snap.Queues, nil
}

func (s statusSnapInsp) LadderSnapshot(context.Context, topology.Scope) (topology.Snapshot, error) {
	return s.snap, nil
}

func (s statusSnapInsp) LadderStats(context.Context, topology.Scope) ([]topology.Queue, error) {
	return s.snap.Queues, nil
}

func (s statusSnapInsp) QueueStats(_ context.Context, _ string, names []string) ([]topology.Queue, error) {
	var out []topology.Queue
	for _, q := range s.snap.Queues {
		if slices.Contains(names, q.Name) {
			out = append(out, q)
		}
	}
	return out, nil
}

func TestObserveOnce(t *testing.T) {
	refused := errors.New("no ladder nope")
	for _, tc := range []struct {
		name    string
		found   func([]topology.Found) error
		wantErr error
		// reads are the why readers run, in order.
		reads []string
	}{
		{name: "no check, no reader"},
		{name: "the check passes, readers in turn", found: func([]topology.Found) error { return nil }, reads: []string{"a", "b"}},
		{name: "the check refuses before any reader", found: func([]topology.Found) error { return refused }, wantErr: refused, reads: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			var why []func(context.Context, Observer) Observer
			for _, r := range tc.reads {
				why = append(why, func(_ context.Context, o Observer) Observer { ran = append(ran, r); return o })
			}
			var handed []topology.Found
			found := tc.found
			if found != nil {
				found = func(fs []topology.Found) error { handed = fs; return tc.found(fs) }
			}
			rep, err := ObserveOnce(context.Background(), statusSnapInsp{fixture.Healthy()}, Scope{Vhost: fixture.Vhost}, found, nil, why...)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if tc.found != nil && len(handed) == 0 {
				t.Error("the check was not handed the ladders found")
			}
			if tc.wantErr != nil {
				if len(ran) != 0 || len(rep.Ladders) != 0 {
					t.Errorf("refused, yet read %v and reported %d ladders", ran, len(rep.Ladders))
				}
				return
			}
			if !slices.Equal(ran, tc.reads) {
				t.Errorf("readers ran %v, want %v", ran, tc.reads)
			}
			if len(rep.Ladders) == 0 {
				t.Error("no ladder reported")
			}
		})
	}
}

func TestExportNotes(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name             string
		read, discovered bool
		layoutNote       string
		want             []string
	}{
		{"read and found: no note", true, true, "ignored", nil},
		{"not read", false, false, "ignored", []string{"rungs: note: the broker was not read (connection refused); exporting the ladder the flags describe"}},
		{"read, not there", true, false, "", []string{`rungs: note: no ladder "jobs" in vhost /; exporting the ladder the flags describe`}},
		{"read, not there, a layout note", true, false, "layout prefix assumed", []string{
			`rungs: note: no ladder "jobs" in vhost /; exporting the ladder the flags describe`, "rungs: note: layout prefix assumed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExportNotes(tc.read, down, tc.discovered, `no ladder "jobs" in vhost /`, tc.layoutNote)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	bridge := topology.Bridge{Exchange: "orders.delayed"}
	for _, tc := range []struct {
		name, ladder string
		wantErr      bool
		// beside: delayed retry was asked beside the ladders and the
		// bridges were read.
		beside bool
	}{
		{name: "every ladder, and what is beside them", beside: true},
		{name: "one ladder, its objects alone", ladder: "orders"},
		{name: "a ladder not there is refused", ladder: "nope", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var retried, bridged, unrouted int
			var besideAsked bool
			rep, bs, err := Status(context.Background(), statusSnapInsp{fixture.Healthy()}, StatusRequest{Vhost: fixture.Vhost, Ladder: tc.ladder}, StatusReads{
				Unrouted: func(_ context.Context, o Observer) Observer { unrouted++; return o },
				Retry: func(_ context.Context, qs []topology.Queue, beside bool) health.RetryHold {
					retried++
					besideAsked = beside
					return health.NewRetryHold(nil, true)
				},
				Bridges: func(context.Context) []topology.Bridge { bridged++; return []topology.Bridge{bridge} },
			})
			if tc.wantErr {
				if err == nil || retried+bridged+unrouted != 0 {
					t.Errorf("err %v; read retry %d, bridges %d, unrouted %d times", err, retried, bridged, unrouted)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if retried != 1 || unrouted != 1 || besideAsked != tc.beside || !rep.Retry.Read {
				t.Errorf("retry read %d times (beside %v), unrouted %d, hold %+v", retried, besideAsked, unrouted, rep.Retry)
			}
			if wantBridges := map[bool]int{true: 1, false: 0}[tc.beside]; bridged != wantBridges || len(bs) != wantBridges {
				t.Errorf("bridges read %d times, got %v, want %d", bridged, bs, wantBridges)
			}
			if len(rep.Ladders) == 0 {
				t.Error("no ladder reported")
			}
		})
	}
}
