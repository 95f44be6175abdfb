package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// BrokerView is what an operation checks its request against: one snapshot of
// the vhost, its ladders and its bindings, built once. A nil *BrokerView means
// the management API did not answer: nothing is checked, and the AMQP
// side (mandatory returns, NOT_FOUND) catches what it can.
type BrokerView struct {
	Snap  topology.Snapshot
	Found []topology.Found
	Graph *topology.Graph
}

// NewBrokerView builds a BrokerView from a snapshot.
func NewBrokerView(snap topology.Snapshot) *BrokerView {
	return &BrokerView{Snap: snap, Found: topology.Discover(snap), Graph: topology.NewGraph(snap)}
}

// WithQueues is the view with queues read by name in its snapshot, and in
// its graph, which routes to queues by name through the default exchange.
// The ladders found do not change: a queue alone makes no ladder.
func (s *BrokerView) WithQueues(qs ...topology.Queue) *BrokerView {
	snap := WithQueues(s.Snap, qs...)
	return &BrokerView{Snap: snap, Found: s.Found, Graph: topology.NewGraph(snap)}
}

// graph is the scope's bindings, nil when there is no scope.
func (s *BrokerView) graph() *topology.Graph {
	if s == nil {
		return nil
	}
	return s.Graph
}

// FieldError is a request refused because of one field: Field names it the
// way the console's form does ("limit", "park"); the CLI words it as its
// flag.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}

// ParseLimit reads a message limit as both front ends take it: empty or
// 0 means no limit (until the source is empty), else a positive count.
func ParseLimit(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fieldErr("limit", "%q is not a number of messages (0 or empty: no limit)", s)
	}
	return n, nil
}
