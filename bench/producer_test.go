package bench

import (
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// What the direct layout costs a producer, without a broker:
// go test -bench Producer -run '^$' ./bench. Both layouts need the routing
// key; the direct layout adds the BCC header, which a producer that is not
// rungs must compute itself (README, "The direct layout and producers in
// other languages") and send with every message.

// producerLadder is the ladder `rungs apply` declares by default (quorum,
// radix 16, 1 s unit), in the given layout.
func producerLadder(tb testing.TB, layout string) topology.Ladder {
	tb.Helper()
	l, err := topology.Ladder{Name: "jobs", Layout: layout}.Normalize()
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// producerDelays are retry delays as an application draws them: uniform
// over 1 s to 1 h, a common backoff's range.
func producerDelays() []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := make([]time.Duration, 1024)
	for i := range ds {
		ds[i] = time.Duration(1+rng.IntN(3600)) * time.Second
	}
	return ds
}

// bccHeaderBytes is the BCC header's size in an AMQP 0-9-1 field table:
// the field name (a length byte and "BCC"), the array's type byte and
// length, and per key a type byte, a 4-byte length and the key.
func bccHeaderBytes(keys []string) int {
	n := 1 + len("BCC") + 1 + 4
	for _, k := range keys {
		n += 1 + 4 + len(k)
	}
	return n
}

func BenchmarkProducerKeys(b *testing.B) {
	ds := producerDelays()
	for _, layout := range []string{"prefix", "direct"} {
		l := producerLadder(b, layout)
		b.Run(layout, func(b *testing.B) {
			var bytes, keys int
			for i := 0; b.Loop(); i++ {
				d := ds[i%len(ds)]
				if _, err := l.Key(d, "orders"); err != nil {
					b.Fatal(err)
				}
				bcc, err := l.BCC(d, "orders")
				if err != nil {
					b.Fatal(err)
				}
				if bcc != nil {
					bytes += bccHeaderBytes(bcc)
					keys += len(bcc)
				}
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "header-B/msg")
			b.ReportMetric(float64(keys)/float64(b.N), "BCC-keys/msg")
		})
	}
}

// TestBCCHeaderBytes pins the encoding the producer benchmark counts: a
// one-hop delay on the default ladder is two keys, i>00.5 and 00>=orders.
func TestBCCHeaderBytes(t *testing.T) {
	l := producerLadder(t, "direct")
	keys, err := l.BCC(5*time.Second, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != "i>00.5" || keys[1] != "00>=orders" {
		t.Fatalf("BCC = %q", keys)
	}
	if got, want := bccHeaderBytes(keys), 4+5+(5+6)+(5+10); got != want {
		t.Fatalf("header bytes = %d, want %d", got, want)
	}
}

// TestPythonProducerMatches runs the Python producer docs/benchmarks times
// (bench/testdata/bcc.py) and checks that its routing keys and BCC headers
// are rungs' own, so that the cost measured is of the right header, and a
// reader can copy it.
func TestPythonProducerMatches(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3: %v (Debian's python3 package; the README's test command needs it)", err)
	}
	l := producerLadder(t, "direct")
	for _, units := range []int{1, 15, 16, 90, 255, 4096, 3600, 1<<28 - 1} {
		out, err := exec.Command(python, "testdata/bcc.py", strconv.Itoa(units), "orders").CombinedOutput()
		if err != nil {
			t.Fatalf("bcc.py %d: %v\n%s", units, err, out)
		}
		d := time.Duration(units) * l.Unit
		key, err := l.Key(d, "orders")
		if err != nil {
			t.Fatal(err)
		}
		keys, err := l.BCC(d, "orders")
		if err != nil {
			t.Fatal(err)
		}
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = "'" + k + "'"
		}
		want := key + " [" + strings.Join(quoted, ", ") + "]"
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("%d units: Python gives\n%s\nrungs\n%s", units, got, want)
		}
	}
}
