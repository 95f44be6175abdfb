package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/rungs-dev/rungs/topology"
)

// Policies lists the vhost's policies and operator policies, to judge what
// applies to its queues.
func (m *Management) Policies(ctx context.Context, vhost string) (topology.Policies, error) {
	var out topology.Policies
	v := url.PathEscape(vhost)
	if err := m.get(ctx, "policies/"+v, nil, &out.Policies); err != nil {
		return topology.Policies{}, fmt.Errorf("list policies of vhost %s: %w", vhost, err)
	}
	if err := m.get(ctx, "operator-policies/"+v, nil, &out.Operator); err != nil {
		if !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrNotFound) {
			return topology.Policies{}, fmt.Errorf("list operator policies of vhost %s: %w", vhost, err)
		}
		out.OperatorUnread = true
	}
	return out, nil
}
