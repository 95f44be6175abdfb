package topology

// Closed returns the plan plus a declaration of every exchange and queue
// its bindings name but it does not declare itself: the destinations that
// workers own (their queues and, in Celery's wiring, their exchanges). A
// closed plan stands on its own, which is what a definitions file or a
// Terraform configuration must do: RabbitMQ refuses a binding to a queue
// that does not exist. Destination queues are durable and of the ladder's
// queue type, as `rungs apply --target` creates them; destination exchanges
// are durable topic exchanges. The added objects follow the plan's own, in
// the order the bindings first name them.
func (p Plan) Closed() Plan {
	out := p
	out.Exchanges = append([]Exchange(nil), p.Exchanges...)
	out.Queues = append([]Queue(nil), p.Queues...)
	haveX, haveQ := map[string]bool{}, map[string]bool{}
	for _, x := range p.Exchanges {
		haveX[x.Name] = true
	}
	for _, q := range p.Queues {
		haveQ[q.Name] = true
	}
	addX := func(name string) {
		if name != "" && !haveX[name] {
			haveX[name] = true
			out.Exchanges = append(out.Exchanges, Exchange{Name: name, Type: "topic", Durable: true})
		}
	}
	for _, b := range p.Bindings {
		addX(b.Source)
		if b.DestinationType == ToExchange {
			addX(b.Destination)
			continue
		}
		if !haveQ[b.Destination] {
			haveQ[b.Destination] = true
			q := Queue{Name: b.Destination, Durable: true}
			if p.Ladder.QueueType == Quorum {
				q.Args = Args{"x-queue-type": string(Quorum)}
			}
			out.Queues = append(out.Queues, q)
		}
	}
	return out
}
