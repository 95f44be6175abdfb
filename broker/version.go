package broker

import (
	"context"

	"github.com/rungs-dev/rungs/topology"
)

// Version is the RabbitMQ release whose rules rungs follows on this
// broker, read once and remembered: the oldest release among the cluster's
// nodes. In a rolling upgrade a queue may live on a node older than the
// one answering the management API, and an older node's quorum rules are
// the stricter ones (a nack counts there; a purge leaves expired messages).
// Listing nodes needs the monitoring tag; without it (or when the listing
// fails otherwise), the answering node's release from the overview is the
// best rungs can know.
func (m *Management) Version(ctx context.Context) (topology.Version, error) {
	if v := m.version.Load(); v != nil {
		return *v, nil
	}
	ov, err := m.Overview(ctx)
	if err != nil {
		return topology.Version{}, err
	}
	v, _ := topology.ParseVersion(ov.RabbitMQVersion)
	if nodes, err := m.Nodes(ctx); err == nil {
		vs := []topology.Version{v}
		for _, n := range nodes {
			vs = append(vs, n.Version)
		}
		v = topology.Oldest(vs...)
	} else if ctx.Err() != nil {
		return topology.Version{}, ctx.Err()
	}
	m.version.Store(&v)
	return v, nil
}
