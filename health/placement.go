package health

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// Placement is where a ladder's rungs run in a cluster. A quorum rung's
// leader does its writes and its dead-lettering; in a storm the node's
// quorum write path bounds the drain (docs/storms.md), so rungs whose
// leaders share one node share one bound, and more nodes add capacity
// only when the leaders spread over them.
type Placement struct {
	// Leaders counts the rungs led from each node (only rungs whose
	// leader the broker reported).
	Leaders map[string]int
	// Nodes are every node a rung runs on: leaders and members, sorted.
	Nodes []string
	// Lost names, for each node that is down, the ladder's queues (rungs
	// and the others) that lost their member on it, in row order.
	Lost map[string][]string
}

// Place reads the placement off a ladder's rung rows.
func Place(rows []Row) Placement {
	p := Placement{Leaders: map[string]int{}, Lost: map[string][]string{}}
	nodes := map[string]bool{}
	for _, r := range rows {
		if r.Missing {
			continue
		}
		for _, n := range r.Stats.LostMembers() {
			p.Lost[n] = append(p.Lost[n], r.Queue)
		}
		if r.Kind != RungRow {
			continue
		}
		if r.Stats.Leader != "" {
			p.Leaders[r.Stats.Leader]++
			nodes[r.Stats.Leader] = true
		}
		for _, n := range r.Stats.Members {
			nodes[n] = true
		}
	}
	for n := range nodes {
		p.Nodes = append(p.Nodes, n)
	}
	sort.Strings(p.Nodes)
	return p
}

// Clustered reports whether the rungs run on more than one node.
func (p Placement) Clustered() bool { return len(p.Nodes) > 1 }

// OneNode is the node every rung's leader sits on while the rungs run on
// several nodes: the cluster adds no drain capacity to the ladder. "" when
// the leaders spread, the ladder runs on one node or has fewer than two
// rungs reporting a leader.
func (p Placement) OneNode() string {
	if !p.Clustered() || len(p.Leaders) != 1 {
		return ""
	}
	for n, c := range p.Leaders {
		if c >= 2 {
			return n
		}
	}
	return ""
}

// OneNodeWarning says what OneNode found, with the broker's own remedy,
// or "" when there is nothing to say.
func (p Placement) OneNodeWarning(vhost, ladder string) string {
	n := p.OneNode()
	if n == "" {
		return ""
	}
	return fmt.Sprintf("all %d rung leaders of %s sit on %s of the %d nodes its rungs run on: a storm drains through that node alone; spread them with rabbitmq-queues rebalance quorum --vhost-pattern '^%s$' --queue-pattern '^%s\\.'",
		p.Leaders[n], ladder, n, len(p.Nodes), regexp.QuoteMeta(vhost), regexp.QuoteMeta(ladder))
}

// Spread is the leaders per node in node order, e.g.
// "rabbit@a 10 · rabbit@b 9 · rabbit@c 9"; "" outside a cluster.
func (p Placement) Spread() string {
	if !p.Clustered() {
		return ""
	}
	parts := make([]string, 0, len(p.Nodes))
	for _, n := range p.Nodes {
		parts = append(parts, fmt.Sprintf("%s %d", n, p.Leaders[n]))
	}
	return strings.Join(parts, " · ")
}

// LostNodes are the nodes the ladder's queues lost members on, sorted.
func (p Placement) LostNodes() []string {
	nodes := make([]string, 0, len(p.Lost))
	for n := range p.Lost {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes
}

// LostText says which nodes the ladder's queues lost members on, e.g.
// "92 queues lost their member on rabbit@c"; "" when none did.
func (p Placement) LostText() string {
	nodes := p.LostNodes()
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		c := len(p.Lost[n])
		parts = append(parts, fmt.Sprintf("%d %s lost %s member on %s", c, topology.Plural(int64(c), "queue", "queues"), topology.Plural(int64(c), "its", "their"), n))
	}
	return strings.Join(parts, "; ")
}
