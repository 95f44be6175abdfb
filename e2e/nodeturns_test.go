package e2e

import (
	"sync"
	"time"
)

// nodeTurns admits one test-owned node at a time (startNode): each test
// restarts, kills or stalls its node under load it makes itself, and two
// such on two cores made 3.10's quorum dead-lettering and TLS handshakes
// race in ways no user meets. The tests on the shared broker still run
// beside it.
//
// Turns go by role, the test with the longest idle tail first: a test
// that hands its turn on early (n.release) while its messages rest in a
// long rung overlaps that wait with the next tests' turns. In arrival
// order, the broker-restart test once came last and its 102 s wait added
// to the suite's wall time.
var nodeTurns = newTurns(map[string]int{"fault": 0, "direct": 1, "tls": 2, "stall": 3})

// turnSettle is how long the first turn waits for better-ranked tests to
// ask: every e2e test starts at once, so they all ask within a moment.
const turnSettle = 2 * time.Second

var packageStart = time.Now()

func newTurns(rank map[string]int) *turns {
	q := &turns{rank: rank, waiting: map[int]int{}}
	q.cond.L = &q.mu
	return q
}

type turns struct {
	mu      sync.Mutex
	cond    sync.Cond
	busy    bool
	rank    map[string]int
	waiting map[int]int // rank → tests waiting with it
}

// take waits for role's turn and returns the function that ends it (safe
// to call more than once).
func (q *turns) take(role string) (release func()) {
	time.Sleep(time.Until(packageStart.Add(turnSettle)))
	r, ok := q.rank[role]
	if !ok {
		r = len(q.rank)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting[r]++
	for q.busy || q.betterWaiting(r) {
		q.cond.Wait()
	}
	q.waiting[r]--
	q.busy = true
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.busy = false
			q.cond.Broadcast()
			q.mu.Unlock()
		})
	}
}

func (q *turns) betterWaiting(r int) bool {
	for rr, n := range q.waiting {
		if rr < r && n > 0 {
			return true
		}
	}
	return false
}
