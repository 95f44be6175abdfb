package topology

import "fmt"

// brokerChecked are the x-arguments RabbitMQ compares when an existing
// queue or exchange is declared again; any other argument may differ.
var brokerChecked = map[string]bool{
	"alternate-exchange": true, "x-dead-letter-exchange": true, "x-dead-letter-routing-key": true,
	"x-dead-letter-strategy": true, "x-delivery-limit": true, "x-expires": true, "x-max-length": true,
	"x-max-length-bytes": true, "x-max-priority": true, "x-message-ttl": true, "x-overflow": true,
	"x-queue-leader-locator": true, "x-queue-mode": true, "x-queue-type": true, "x-quorum-initial-group-size": true,
	"x-single-active-consumer": true,
}

// Conflicts lists the plan's queues and exchanges that exist in snap
// declared in a way the broker would refuse to declare again: declaring
// stops at the first such object, after creating those before it.
func (p Plan) Conflicts(snap Snapshot) []Drift {
	checked := func(a Args) Args {
		out := Args{}
		for k, v := range a {
			if brokerChecked[k] {
				out[k] = v
			}
		}
		return out
	}
	var out []Drift
	add := func(object, name string, diffs []string) {
		for _, d := range diffs {
			out = append(out, Drift{Kind: Different, Object: object, Name: name, Detail: d})
		}
	}
	for _, want := range p.Exchanges {
		if got, ok := snap.Exchange(want.Name); ok {
			var ds []string
			if got.Type != want.Type {
				ds = append(ds, fmt.Sprintf("type is %s, plan has %s", got.Type, want.Type))
			}
			if got.Durable != want.Durable || got.AutoDelete != want.AutoDelete {
				ds = append(ds, fmt.Sprintf("durable/auto-delete is %v/%v, plan has %v/%v", got.Durable, got.AutoDelete, want.Durable, want.AutoDelete))
			}
			add("exchange", want.Name, append(ds, ArgsDiff(checked(want.Args), checked(got.Args))...))
		}
	}
	for _, want := range p.Queues {
		if got, ok := snap.Queue(want.Name); ok {
			var ds []string
			if got.Durable != want.Durable || got.AutoDelete != want.AutoDelete {
				ds = append(ds, fmt.Sprintf("durable/auto-delete is %v/%v, plan has %v/%v", got.Durable, got.AutoDelete, want.Durable, want.AutoDelete))
			}
			add("queue", want.Name, append(ds, ArgsDiff(checked(want.Args), checked(got.Args))...))
		}
	}
	return out
}
