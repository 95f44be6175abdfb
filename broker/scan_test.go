package broker_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// TestScanHoldsADeepQueueAWindowAtATime: a scan reads every message of a
// queue several windows deep, once each, through a consumer per window
// (not one per possible message, which let the broker send a whole rung
// into the client's memory at once), and leaves the queue as it was, in
// order. On a quorum queue the window is also the credit the queue grants.
func TestScanHoldsADeepQueueAWindowAtATime(t *testing.T) {
	t.Parallel()
	for _, qt := range []topology.QueueType{topology.Classic, topology.Quorum} {
		t.Run(string(qt), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			declare(t, e, topology.Queue{Name: "deep", Args: topology.Args{"x-queue-type": string(qt)}})
			n := 3*broker.HoldWindow + 100
			want := fill(t, e, "deep", "m", n, nil)
			seen := map[string]int{}
			st, err := e.conn.Scan(ctxFor(t, 120*time.Second), "deep", broker.ScanOptions{Each: func(m broker.PeekedMessage) {
				seen[m.MessageID]++
			}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Seen != n || len(seen) != n || st.Stopped != broker.ScanEmpty {
				t.Fatalf("scan of %d: %+v, %d distinct", n, st, len(seen))
			}
			for id, k := range seen {
				if k != 1 {
					t.Fatalf("%s read %d times", id, k)
				}
			}
			// A window is topped up at half its credit: one consumer per
			// window read, and at most one more.
			if most := n/broker.HoldWindow + 2; st.Consumers < n/broker.HoldWindow || st.Consumers > most {
				t.Errorf("%d consumers held %d messages; want at most %d", st.Consumers, n, most)
			}
			// The scan hands everything back with a nack, which the broker
			// answers with nothing: wait until it has processed it.
			testutil.Eventually(t, 30*time.Second, "every message back in the queue", func() error {
				if d := depth(t, e, "deep"); d != n {
					return fmt.Errorf("it holds %d of %d", d, n)
				}
				return nil
			})
			if got := ids(drainAll(t, e, "deep")); !reflect.DeepEqual(got, want) {
				first := -1
				for i := range got {
					if i < len(want) && got[i] != want[i] {
						first = i
						break
					}
				}
				pos := map[string]int{}
				for i, id := range got {
					pos[id] = i
				}
				var jumps []string
				for i := 1; i < len(got); i++ {
					if pos[want[i]] != pos[want[i-1]]+1 {
						jumps = append(jumps, fmt.Sprintf("%s@%d→%s@%d", want[i-1], pos[want[i-1]], want[i], pos[want[i]]))
					}
				}
				t.Errorf("after the scan the queue holds %d messages, first %v; want %d in order; first out of place at %d; jumps %v", len(got), head(got), n, first, jumps[:min(len(jumps), 10)])
			}
		})
	}
}

func head(s []string) string {
	if len(s) > 3 {
		s = s[:3]
	}
	return fmt.Sprint(s)
}
