package topology

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestParseDeaths(t *testing.T) {
	at := time.Date(2026, 11, 22, 13, 29, 12, 0, time.UTC)
	cases := map[string]struct {
		headers map[string]any
		want    []Death
		err     error
	}{
		"no header":   {headers: map[string]any{"tenant": "acme"}},
		"nil headers": {},
		"as amqp091 decodes it": {
			headers: map[string]any{HeaderDeath: []any{
				map[string]any{"count": int64(2), "reason": "rejected", "queue": "work", "time": at.Add(5 * time.Second),
					"exchange": "jobs.rung.00.expired", "routing-keys": []any{"0.1.0.1.work"}},
				map[string]any{"count": int64(1), "reason": "expired", "queue": "jobs.rung.02", "time": at,
					"exchange": "jobs.ingest", "routing-keys": []any{"0.1.0.1.work", "cc"}, "original-expiration": "9000"},
			}},
			want: []Death{
				{Queue: "work", Reason: "rejected", Exchange: "jobs.rung.00.expired", RoutingKeys: []string{"0.1.0.1.work"}, Count: 2, Time: at.Add(5 * time.Second)},
				{Queue: "jobs.rung.02", Reason: "expired", Exchange: "jobs.ingest", RoutingKeys: []string{"0.1.0.1.work", "cc"}, Count: 1, Time: at, OriginalExpiration: "9000"},
			},
		},
		"as JSON gives it": {
			headers: map[string]any{HeaderDeath: []any{
				map[string]any{"count": json.Number("3"), "reason": "expired", "queue": "q", "time": float64(at.Unix()), "routing-keys": []any{"k"}},
				map[string]any{"count": float64(1), "reason": "maxlen", "queue": "p", "time": at.Format(time.RFC3339)},
			}},
			want: []Death{
				{Queue: "q", Reason: "expired", RoutingKeys: []string{"k"}, Count: 3, Time: at},
				{Queue: "p", Reason: "maxlen", Count: 1, Time: at},
			},
		},
		"not an array": {headers: map[string]any{HeaderDeath: "expired"}, err: ErrBadHeader},
		"not a table":  {headers: map[string]any{HeaderDeath: []any{"expired"}}, err: ErrBadHeader},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDeaths(tc.headers)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseDeaths() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestTimelineNamesLadderQueues(t *testing.T) {
	l, err := Ladder{Name: "jobs", Levels: 4, Radix: 2, Unit: time.Second, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	// A 5s delay to work (rungs 02 and 00), then a worker rejected it into
	// a dead-letter queue: x-death holds the most recent first.
	deaths := []Death{
		{Queue: "work", Reason: "rejected", Count: 1, Time: at.Add(5 * time.Second)},
		{Queue: "jobs.rung.00", Reason: "expired", Count: 1, Time: at.Add(4 * time.Second)},
		{Queue: "jobs.rung.02", Reason: "expired", Count: 1, Time: at},
		{Queue: "elsewhere", Reason: "maxlen", Count: 1},
	}
	got := Timeline(deaths, []Ladder{l})
	type row struct {
		queue, role string
		level       int
		since       time.Duration
	}
	var rows []row
	for _, h := range got {
		rows = append(rows, row{h.Queue, h.Role, h.Rung.Level, h.Since})
	}
	want := []row{{"elsewhere", "", 0, 0}, {"jobs.rung.02", RoleRung, 2, 0}, {"jobs.rung.00", RoleRung, 0, 4 * time.Second}, {"work", RoleTarget, 0, 5 * time.Second}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("Timeline() =\n%+v\nwant\n%+v", rows, want)
	}
	if got[1].Rung.TTL != 4*time.Second || got[1].Ladder != "jobs" {
		t.Errorf("rung hop = %+v", got[1])
	}
	if s := got[2].String(); s != "expired from jobs.rung.00 ×1 at 13:00:04" {
		t.Errorf("String() = %q", s)
	}

	// As RabbitMQ 3.10 leaves a 1.5s delay through four rungs of 100ms to
	// 800ms, all within one second: the latest first, the rest reversed at
	// every hop.
	fast, _ := Ladder{Name: "x", Levels: 4, Radix: 2, Unit: 100 * time.Millisecond}.Normalize()
	same := []Death{
		{Queue: "x.rung.00", Reason: "expired", Time: at}, {Queue: "x.rung.02", Reason: "expired", Time: at},
		{Queue: "x.rung.03", Reason: "expired", Time: at}, {Queue: "x.rung.01", Reason: "expired", Time: at},
	}
	var order []string
	for _, h := range Timeline(same, []Ladder{fast}) {
		order = append(order, h.Queue)
	}
	if want := []string{"x.rung.03", "x.rung.02", "x.rung.01", "x.rung.00"}; !reflect.DeepEqual(order, want) {
		t.Errorf("Timeline() order %v, want %v", order, want)
	}
}

func TestQueueRole(t *testing.T) {
	l, _ := Ladder{Name: "j", Levels: 3, Radix: 2, Targets: []string{"w"}}.Normalize()
	cases := map[string]string{"j.rung.01": RoleRung, "j.done": RoleDone, "j.unroutable": RoleUnroutable, "w": RoleTarget, "j.ingest": "", "x": ""}
	for q, want := range cases {
		t.Run(q, func(t *testing.T) {
			role, _, ok := l.QueueRole(q)
			if role != want || ok != (want != "") {
				t.Errorf("QueueRole(%q) = %q, %v; want %q", q, role, ok, want)
			}
		})
	}
}

func TestStripBrokerHeaders(t *testing.T) {
	in := map[string]any{
		HeaderDeath: []any{}, HeaderFirstDeathQueue: "q", "x-first-death-reason": "expired", "x-first-death-exchange": "",
		"x-last-death-queue": "q", "x-last-death-reason": "expired", "x-last-death-exchange": "", HeaderDeliveryCount: int64(3), HeaderAcquiredCount: int64(5),
		"tenant": "acme", HeaderAttempt: int64(2),
	}
	before := len(in)
	got := StripBrokerHeaders(in)
	if want := (map[string]any{"tenant": "acme", HeaderAttempt: int64(2)}); !reflect.DeepEqual(got, want) {
		t.Errorf("StripBrokerHeaders() = %v, want %v", got, want)
	}
	if len(in) != before {
		t.Error("StripBrokerHeaders modified its input")
	}
	if got := StripBrokerHeaders(nil); len(got) != 0 {
		t.Errorf("StripBrokerHeaders(nil) = %v", got)
	}
}

// drawAttempt draws a history entry as the retry library writes them.
func drawAttempt(t *rapid.T, n int) Attempt {
	a := Attempt{
		N:      n,
		At:     time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "at"), rapid.Int64Range(0, 999999999).Draw(t, "ns")),
		Reason: rapid.String().Draw(t, "reason"),
		Queue:  rapid.SampledFrom([]string{"", "work", "orders.retry"}).Draw(t, "queue"),
		Parked: rapid.Bool().Draw(t, "parked"),
	}
	if !a.Parked {
		a.Delay = time.Duration(rapid.Int64Range(0, 1e9).Draw(t, "delayms")) * time.Millisecond
	}
	return a
}

func TestHistoryRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		var h []Attempt
		for i := range n {
			h = append(h, drawAttempt(t, i+1))
		}
		keep := rapid.IntRange(0, 40).Draw(t, "keep")
		got := ParseHistory(map[string]any{HeaderHistory: HistoryValue(h, keep)})
		want := h
		if keep > 0 && len(want) > keep {
			want = want[len(want)-keep:]
		}
		if len(got) != len(want) {
			t.Fatalf("kept %d entries, want %d", len(got), len(want))
		}
		for i, w := range want {
			w.At = w.At.UTC().Truncate(time.Second)
			w.Reason = CutReason(w.Reason)
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("entry %d = %+v, want %+v", i, got[i], w)
			}
		}
	})
}

func TestCutReason(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringN(0, 400, -1).Draw(t, "s")
		got := CutReason(s)
		if len(got) > MaxReasonBytes {
			t.Fatalf("%d bytes", len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cut a rune: %q", got)
		}
		if strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("not one line: %q", got)
		}
		if CutReason(got) != got {
			t.Fatalf("not idempotent: %q", got)
		}
	})
}

func TestHeaderInt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int32().Draw(t, "n")
		text := strconv.Itoa(int(n))
		for _, v := range []any{int64(n), int32(n), int(n), float64(n), json.Number(text), text} {
			if got, ok := HeaderInt(v); !ok || got != int64(n) {
				t.Fatalf("HeaderInt(%T %v) = %d, %v", v, v, got, ok)
			}
		}
	})
	for _, bad := range []any{"x", 1.5, nil, []byte("1"), uint64(1 << 63)} {
		if _, ok := HeaderInt(bad); ok {
			t.Errorf("HeaderInt(%T %v) accepted", bad, bad)
		}
	}
}
