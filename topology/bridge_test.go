package topology

import (
	"strings"
	"testing"
	"time"
)

// x-delay as the plugin reads it where it defines it; parked with a
// reason where it does not.
func TestDecideDelay(t *testing.T) {
	max := time.Hour
	for name, c := range map[string]struct {
		v      any
		clamp  bool
		action DelayAction
		delay  time.Duration
		reason string
	}{
		"absent":          {nil, false, DeliverNow, 0, ""},
		"zero":            {int32(0), false, DeliverNow, 0, ""},
		"negative":        {int64(-5), false, DeliverNow, 0, ""},
		"long":            {int64(5000), false, Schedule, 5 * time.Second, ""},
		"short int":       {int16(250), false, Schedule, 250 * time.Millisecond, ""},
		"float rounds up": {1.2, false, Schedule, 2 * time.Millisecond, ""},
		"string":          {"abc", false, Park, 0, ReasonNotANumber + `: the string "abc"`},
		"digits string":   {"5000", false, Park, 0, ReasonNotANumber},
		"bool":            {true, false, Park, 0, ReasonNotANumber},
		"beyond":          {int64(2 * 3600_000), false, Park, 0, ReasonTooLong},
		"clamped":         {int64(2 * 3600_000), true, Schedule, time.Hour, "clamped"},
		"the maximum":     {int64(3600_000), false, Schedule, time.Hour, ""},
	} {
		h := map[string]any{}
		if c.v != nil {
			h[HeaderDelay] = c.v
		}
		d := DecideDelay(h, max, c.clamp)
		if d.Action != c.action || d.Delay != c.delay || !strings.Contains(d.Reason, c.reason) || (c.reason == "") != (d.Reason == "") {
			t.Errorf("%s: %+v, want action %d delay %v reason %q", name, d, c.action, c.delay, c.reason)
		}
	}
}

func TestBridgeNamesAndDiscovery(t *testing.T) {
	n := NamesOfBridge("orders.delayed", "")
	if n.Exit != "orders.delayed.exit" || n.Intake != "orders.delayed.bridge.intake" {
		t.Fatalf("%+v", n)
	}
	for _, bad := range []struct {
		n   BridgeNames
		typ string
	}{
		{NamesOfBridge("", ""), "direct"}, {NamesOfBridge("x", "x"), "direct"}, {NamesOfBridge("x", ""), "x-delayed-message"},
		{NamesOfBridge("amq.x", ""), "topic"},
	} {
		if CheckBridge(bad.n, bad.typ) == nil {
			t.Errorf("%+v %s accepted", bad.n, bad.typ)
		}
	}
	p := BridgePlan(n, "topic", Version{Major: 4, Minor: 0, Patch: 5})
	s := Snapshot{Queues: p.Queues}
	bs := DiscoverBridges(s)
	if len(bs) != 1 || bs[0].Exchange != "orders.delayed" || !bs[0].HasDue || !bs[0].HasParked {
		t.Fatalf("%+v", bs)
	}
	if p.Queues[0].Args[deliveryLimitArg] != noDeliveryLimit {
		t.Errorf("4.0 intake without delivery limit -1: %v", p.Queues[0].Args)
	}
	if q := BridgePlan(n, "topic", Version{Major: 3, Minor: 10, Patch: 8}).Queues[0]; q.Args[deliveryLimitArg] != nil {
		t.Errorf("3.10 intake with a delivery limit: %v", q.Args)
	}
	snap := Snapshot{Bindings: []Binding{
		{Source: "plugin", Destination: "eu", DestinationType: ToQueue, RoutingKey: "eu"},
		{Source: "other", Destination: "us", DestinationType: ToQueue, RoutingKey: "us"},
	}}
	if cb := CopiedBindings(snap, "plugin", n); len(cb) != 1 || cb[0].Source != n.Exit || cb[0].RoutingKey != "eu" {
		t.Errorf("copied %+v", cb)
	}
}

// A quorum intake reports no head timestamp on any release, so the lag
// comes from the backlog and the rate the bridges take it at; a head
// timestamp, where there is one, wins; an intake nothing takes from has
// no lag to give.
func TestBridgeLag(t *testing.T) {
	for _, c := range []struct {
		name string
		st   QueueStats
		want time.Duration
	}{
		{"empty", QueueStats{Consumers: 1, DeliverRate: 500}, 0},
		{"backlog over the take rate", QueueStats{Ready: 3000, Consumers: 1, DeliverRate: 1500}, 2 * time.Second},
		{"head timestamp wins", QueueStats{Ready: 3000, Consumers: 1, DeliverRate: 1500, HeadAge: 9 * time.Second}, 9 * time.Second},
		{"nothing takes", QueueStats{Ready: 3000}, 0},
	} {
		b := Bridge{Intake: Queue{Stats: c.st}}
		if got := b.Lag(); got != c.want {
			t.Errorf("%s: lag %s, want %s", c.name, got, c.want)
		}
	}
}

// FromReceipt counts a delay from the broker's receipt time: what is left,
// at once once it has passed, unchanged without a receipt time.
func TestDelayFromReceipt(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	sched := DelayDecision{Action: Schedule, Delay: 30 * time.Second}
	at := func(ago time.Duration) map[string]any {
		return map[string]any{HeaderReceivedMS: now.Add(-ago).UnixMilli()}
	}
	for _, c := range []struct {
		name    string
		d       DelayDecision
		headers map[string]any
		want    DelayDecision
		ok      bool
	}{
		{"waited 10s of 30s", sched, at(10 * time.Second), DelayDecision{Action: Schedule, Delay: 20 * time.Second}, true},
		{"received just now", sched, at(0), sched, true},
		{"passed", sched, at(45 * time.Second), DelayDecision{Action: DeliverNow}, true},
		{"exactly due", sched, at(30 * time.Second), DelayDecision{Action: DeliverNow}, true},
		{"broker clock ahead", sched, at(-5 * time.Second), sched, true},
		{"no receipt time", sched, map[string]any{}, sched, false},
		{"receipt time not a number", sched, map[string]any{HeaderReceivedMS: "yesterday"}, sched, false},
		{"receipt time an int32", sched, map[string]any{HeaderReceivedMS: int32(5)}, DelayDecision{Action: DeliverNow}, true},
		{"not scheduled", DelayDecision{Action: DeliverNow}, at(time.Second), DelayDecision{Action: DeliverNow}, false},
		{"parked", DelayDecision{Action: Park, Reason: "r"}, at(time.Second), DelayDecision{Action: Park, Reason: "r"}, false},
	} {
		got, ok := c.d.FromReceipt(c.headers, now)
		if ok != c.ok || got.Action != c.want.Action || got.Delay != c.want.Delay || (c.want.Reason != "" && got.Reason != c.want.Reason) {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
		if got.Action == DeliverNow && ok && got.Reason == "" {
			t.Errorf("%s: delivered now without saying why", c.name)
		}
	}
}

// Whatever the receipt time, the delay left is never more than the delay
// nor negative, and with the time waited it makes up the whole delay.
func FuzzDelayFromReceipt(f *testing.F) {
	f.Add(int64(30_000), int64(10_000))
	f.Add(int64(1), int64(-5))
	f.Add(int64(86_400_000), int64(86_400_001))
	f.Fuzz(func(t *testing.T, delayMS, agoMS int64) {
		if delayMS <= 0 || delayMS > 1<<40 || agoMS < -(1<<40) || agoMS > 1<<40 {
			t.Skip()
		}
		now := time.UnixMilli(1_800_000_000_000)
		d := DelayDecision{Action: Schedule, Delay: time.Duration(delayMS) * time.Millisecond}
		got, ok := d.FromReceipt(map[string]any{HeaderReceivedMS: now.UnixMilli() - agoMS}, now)
		if !ok {
			t.Fatalf("not counted from a receipt time %d ms ago", agoMS)
		}
		waited := time.Duration(max(agoMS, 0)) * time.Millisecond
		switch got.Action {
		case Schedule:
			if got.Delay <= 0 || got.Delay > d.Delay || got.Delay+waited != d.Delay {
				t.Fatalf("delay %s, waited %s: left %s", d.Delay, waited, got.Delay)
			}
		case DeliverNow:
			if waited < d.Delay {
				t.Fatalf("delivered now after %s of %s", waited, d.Delay)
			}
		default:
			t.Fatalf("action %v", got.Action)
		}
	})
}
