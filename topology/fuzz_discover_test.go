package topology

import (
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"
)

// fuzzReader hands out the fuzzer's bytes; past the end it gives zeros.
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) more() bool { return r.pos < len(r.data) }

func (r *fuzzReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *fuzzReader) pick(n int) int { return int(r.byte()) % n }

// bytes takes up to n raw bytes: arbitrary, not necessarily UTF-8.
func (r *fuzzReader) bytes(n int) string {
	k := r.pick(n + 1)
	end := min(r.pos+k, len(r.data))
	s := string(r.data[r.pos:end])
	r.pos = end
	return s
}

// nameParts are pieces the names of every layout are made of, so that
// random names often look like ladders, half-ladders and near misses.
var nameParts = []string{
	"jobs", "a", "x.y", "rungs", "nsb.v2", "nsb.v2.delay-level-", "nsb.v2.delay-delivery",
	".rung.", ".delay.", ".done", ".ingest", ".deliver", ".expired", ".unroutable", ".",
	"00", "01", "02", "03", "07", "12", "27", "28", "99", "1", "2", "4", "8", "16", "#", "*", "",
}

func (r *fuzzReader) name() string {
	var s string
	for i, n := 0, 1+r.pick(4); i < n; i++ {
		if r.pick(8) == 0 {
			s += r.bytes(6)
			continue
		}
		s += nameParts[r.pick(len(nameParts))]
	}
	return s
}

// key is a routing key or binding pattern: digits, wildcards, words.
func (r *fuzzReader) key() string {
	words := []string{"0", "1", "2", "f", "*", "#", "orders", "", "i>00", "01>00.1", "00>=", "00>=orders"}
	var s string
	for i, n := 0, r.pick(12); i < n; i++ {
		if i > 0 {
			s += "."
		}
		s += words[r.pick(len(words))]
	}
	return s
}

// value is an argument value of any type a broker or a careless hand
// could put there.
func (r *fuzzReader) value() any {
	switch r.pick(10) {
	case 0:
		return int64(r.byte()) * 1000
	case 1:
		return -int64(r.byte())
	case 2:
		return int64(1) << (r.pick(64))
	case 3:
		return float64(r.byte()) + 0.5
	case 4:
		return strconv.Itoa(int(r.byte()) * 1000)
	case 5:
		return r.name()
	case 6:
		return r.pick(2) == 0
	case 7:
		return nil
	case 8:
		return map[string]any{"k": r.name()}
	}
	return []any{r.name(), int64(r.byte())}
}

var argNames = []string{
	"x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key", "x-queue-type",
	"x-dead-letter-strategy", "x-overflow", "alternate-exchange", "x-expires", "x-other",
}

func (r *fuzzReader) args() Args {
	if r.pick(3) == 0 {
		return nil
	}
	a := Args{}
	for i, n := 0, r.pick(4); i < n; i++ {
		a[argNames[r.pick(len(argNames))]] = r.value()
	}
	return a
}

// ladder builds a valid ladder of any layout, or reports none.
func (r *fuzzReader) ladder() (Ladder, bool) {
	lays := LayoutNames()
	l := Ladder{
		Name:      []string{"jobs", "a", "x.y", "rungs", "nsb", "example"}[r.pick(6)],
		Vhost:     "/",
		Layout:    lays[r.pick(len(lays))],
		Unit:      []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, time.Hour}[r.pick(4)],
		Levels:    1 + r.pick(12),
		Radix:     []int{2, 4, 8, 16}[r.pick(4)],
		QueueType: []QueueType{Classic, Quorum}[r.pick(2)],
	}
	if r.pick(3) == 0 {
		l.Targets = []string{"orders", "orders.retry"}[:1+r.pick(2)]
	}
	// Layouts with fixed names and shapes (nsb) or without destinations
	// (suffix) refuse some combinations: fall back towards their defaults.
	for _, fix := range []func(*Ladder){
		func(*Ladder) {},
		func(l *Ladder) { l.Radix, l.Targets = 2, nil },
		func(l *Ladder) { l.Name, l.Unit, l.Levels = "nsb.v2", 0, 0 },
	} {
		fix(&l)
		if n, err := l.Normalize(); err == nil {
			return n, true
		}
	}
	return Ladder{}, false
}

// snapshot decodes bytes into a snapshot: up to two real ladders, then
// any number of deletions, additions and changes of every kind of object.
func snapshotFrom(data []byte) Snapshot {
	r := &fuzzReader{data: data}
	s := Snapshot{Vhost: "/"}
	for i, n := 0, r.pick(3); i < n; i++ {
		if l, ok := r.ladder(); ok {
			s = s.Merge(l.Plan().Snapshot())
		}
	}
	for r.more() {
		switch r.pick(9) {
		case 0:
			if len(s.Queues) > 0 {
				i := r.pick(len(s.Queues))
				s.Queues = append(s.Queues[:i:i], s.Queues[i+1:]...)
			}
		case 1:
			if len(s.Exchanges) > 0 {
				i := r.pick(len(s.Exchanges))
				s.Exchanges = append(s.Exchanges[:i:i], s.Exchanges[i+1:]...)
			}
		case 2:
			if len(s.Bindings) > 0 {
				i := r.pick(len(s.Bindings))
				s.Bindings = append(s.Bindings[:i:i], s.Bindings[i+1:]...)
			}
		case 3:
			s.Queues = append(s.Queues, Queue{Name: r.name(), Durable: r.pick(2) == 0, Args: r.args(),
				Stats: QueueStats{Ready: int64(r.byte()), Type: []string{"", "classic", "quorum", "stream"}[r.pick(4)]}})
		case 4:
			s.Exchanges = append(s.Exchanges, Exchange{Name: r.name(), Type: []string{"topic", "fanout", "direct", "headers", ""}[r.pick(5)],
				Durable: r.pick(2) == 0, Args: r.args()})
		case 5:
			b := Binding{Source: r.name(), Destination: r.name(), DestinationType: ToQueue, RoutingKey: r.key()}
			if r.pick(3) == 0 {
				b.DestinationType = ToExchange
			}
			s.Bindings = append(s.Bindings, b)
		case 6:
			if len(s.Queues) > 0 {
				q := &s.Queues[r.pick(len(s.Queues))]
				args := Args{}
				for k, v := range q.Args {
					args[k] = v
				}
				args[argNames[r.pick(len(argNames))]] = r.value()
				q.Args = args
			}
		case 7:
			if len(s.Queues) > 0 {
				q := &s.Queues[r.pick(len(s.Queues))]
				q.Name += nameParts[r.pick(len(nameParts))]
			}
		case 8:
			if len(s.Bindings) > 0 {
				s.Bindings[r.pick(len(s.Bindings))].RoutingKey = r.key()
			}
		}
	}
	return s
}

// FuzzDiscover feeds discovery arbitrary broker contents: real ladders of
// every layout, damaged and mixed with random queues, exchanges, bindings
// and arguments of every type. Discovery must not panic, and every ladder
// it reports must be a valid ladder whose own plan it recognises.
func FuzzDiscover(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{1, 0, 0, 2, 3, 0},                   // one prefix ladder
		{1, 1, 1, 2, 3, 0},                   // one suffix ladder
		{1, 4, 2, 2, 27, 0},                  // one nsb ladder
		{2, 0, 0, 1, 3, 1, 1, 1, 1, 2, 4, 1}, // two ladders
		{1, 0, 0, 2, 3, 0, 0, 0, 0, 3, 6, 0, 9, 8, 5, 2, 4, 4, 1, 7, 3, 6, 2, 1},
		{1, 0, 0, 2, 3, 0, 6, 3, 1, 6, 2, 0, 5, 0, 3, 6, 1, 5},
		[]byte("jobs.rung.03\xff\x00*#.rung.\x01\x02"),
		{1, 0, 5, 2, 3, 0},                   // one direct ladder
		{1, 0, 5, 2, 3, 1, 2, 0, 0, 1, 0, 1}, // a direct ladder without its ingest exchange, then a queue's
		{2, 0, 0, 2, 3, 0, 1, 5, 2, 3, 1},    // a prefix and a direct ladder
		{1, 0, 5, 2, 3, 0, 4, 0, 2, 0, 8, 3}, // a direct ladder and a stray exchange
		{1, 0, 5, 2, 3, 0, 8, 9, 8, 10, 2, 5},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap := snapshotFrom(data)
		found := Discover(snap)
		if !sort.SliceIsSorted(found, func(i, j int) bool {
			a, b := found[i].Ladder, found[j].Ladder
			return a.Name < b.Name || a.Name == b.Name && a.Layout < b.Layout
		}) {
			t.Fatalf("Discover's result is not sorted by name and layout")
		}
		for _, fd := range found {
			l := fd.Ladder
			n, err := l.Normalize()
			if err != nil {
				t.Fatalf("discovered %+v, which does not normalize: %v", l, err)
			}
			if !reflect.DeepEqual(n, l) {
				t.Fatalf("discovered %+v, which normalizes to %+v", l, n)
			}
			plan := l.Plan()
			if d := Diff(plan, plan.Snapshot()); len(d) != 0 {
				t.Fatalf("Diff(plan, plan) of discovered %+v = %v", l, d)
			}
			again := false
			for _, g := range Discover(plan.Snapshot()) {
				if g.Ladder.Name == l.Name && g.Ladder.Layout == l.Layout {
					again = true
					if len(g.Drift) != 0 || g.Ladder.Unit != l.Unit || g.Ladder.Levels != l.Levels ||
						g.Ladder.Radix != l.Radix || g.Ladder.QueueType != l.QueueType {
						t.Fatalf("discovered %+v; its own plan is discovered as %+v with drift %v", l, g.Ladder, g.Drift)
					}
				}
			}
			if !again {
				t.Fatalf("discovered %+v, but not in its own plan", l)
			}
			// Every delay the ladder holds has a key and a path, to its
			// default target or (layouts that need one) a destination.
			for _, d := range []time.Duration{0, l.Unit, l.MaxDelay() / 3, l.MaxDelay()} {
				if _, err := l.Trace(d, ""); err != nil {
					if _, err2 := l.Trace(d, "orders"); err2 != nil {
						t.Fatalf("discovered %+v cannot trace %s: %v; to a destination: %v", l, d, err, err2)
					}
				}
			}
		}
	})
}
