package ui

import "github.com/rungs-dev/rungs/topology"

// PlanExchangeJSON, PlanQueueJSON and PlanBindingJSON are a plan's objects
// as `rungs plan --json` prints them.
type PlanExchangeJSON struct {
	Name string         `json:"name"`
	Type string         `json:"type"`
	Args map[string]any `json:"arguments"`
}

type PlanQueueJSON struct {
	Name string         `json:"name"`
	Args map[string]any `json:"arguments"`
}

type PlanBindingJSON struct {
	Source          string `json:"source"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
}

// PlanObjectsJSON shapes plan's objects; a kind the plan has none of is
// null, as it always was.
func PlanObjectsJSON(plan topology.Plan) (exchanges []PlanExchangeJSON, queues []PlanQueueJSON, bindings []PlanBindingJSON) {
	for _, x := range plan.Exchanges {
		exchanges = append(exchanges, PlanExchangeJSON{x.Name, x.Type, ArgsJSON(x.Args)})
	}
	for _, q := range plan.Queues {
		queues = append(queues, PlanQueueJSON{q.Name, ArgsJSON(q.Args)})
	}
	for _, b := range plan.Bindings {
		bindings = append(bindings, PlanBindingJSON{b.Source, b.Destination, b.DestinationType, b.RoutingKey})
	}
	return exchanges, queues, bindings
}

// ArgsJSON is an object's arguments for JSON: {} rather than null when it
// has none, so that scripts can index it.
func ArgsJSON(a topology.Args) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}
