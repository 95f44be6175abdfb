package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/rungs-dev/rungs/topology"
)

// The policies, and what they configure on a queue, are judged in
// topology (no I/O); these names keep the broker's callers reading as
// before.
type (
	Policies     = topology.Policies
	Policy       = topology.Policy
	DelayedRetry = topology.DelayedRetry
)

// Policies lists the vhost's policies and operator policies, to judge what
// applies to its queues.
func (m *Management) Policies(ctx context.Context, vhost string) (Policies, error) {
	var out Policies
	v := url.PathEscape(vhost)
	if err := m.get(ctx, "policies/"+v, nil, &out.Policies); err != nil {
		return Policies{}, fmt.Errorf("list policies of vhost %s: %w", vhost, err)
	}
	if err := m.get(ctx, "operator-policies/"+v, nil, &out.Operator); err != nil {
		if !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrNotFound) {
			return Policies{}, fmt.Errorf("list operator policies of vhost %s: %w", vhost, err)
		}
		out.OperatorUnread = true
	}
	return out, nil
}
