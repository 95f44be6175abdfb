package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"

	"github.com/rungs-dev/rungs/topology"
)

// Discovery is what DiscoverLadders found.
type Discovery struct {
	// Found are the ladders, sorted by vhost, then as topology.Discover
	// sorts them.
	Found []topology.Found
	// Snapshots hold, per vhost with a ladder, the objects named like a
	// ladder's (not the vhost's other ones), with statistics: enough for
	// a list of ladders and their health. Targets' queues are not in
	// them; a view of ladders reads LadderSnapshot(ScopeOf(vhost, ...)).
	Snapshots map[string]topology.Snapshot
	// Hidden are the vhosts the broker lists but the user may not read
	// (sorted); their ladders are not in Found. See Hidden's error.
	Hidden []string
	// User is the user the broker hid them from.
	User string
}

// HiddenError is the one line to show for the vhosts the user may not
// read, or nil when there are none.
func (d Discovery) HiddenError() error {
	if len(d.Hidden) == 0 {
		return nil
	}
	return &VhostAccessError{User: d.User, Vhosts: d.Hidden}
}

// maxSourceRequests is how many exchanges discovery reads the bindings of
// one by one; above it, one listing of every binding is cheaper in
// requests.
const maxSourceRequests = 64

// DiscoverLadders finds every ladder in the named vhosts, or in every
// vhost the user may read when vhosts is nil, in a number of requests
// that does not grow with the vhosts: the queues and exchanges named like
// a ladder's, across vhosts, 500 a page, then their bindings. It never
// reads a vhost's definitions. `rungs discover` and the console's ladder
// list use it; a vhost the user may not read is in Hidden, not an error.
func (m *Management) DiscoverLadders(ctx context.Context, vhosts []string) (Discovery, error) {
	d := Discovery{Snapshots: map[string]topology.Snapshot{}, User: m.ep.mgmtUser}
	sc := topology.DiscoveryScope()
	var qs []apiQueue
	var xs []apiExchange
	if vhosts == nil {
		all, err := m.Vhosts(ctx)
		if err != nil {
			return d, err
		}
		// Every vhost has amq.direct, so the vhosts the exchange listing
		// leaves out are the ones the user may not read (the broker lists
		// every vhost to a monitoring user, and skips those in listings).
		xsc := sc
		xsc.Names = []string{"amq.direct"}
		if qs, err = m.scopedQueues(ctx, sc); err == nil {
			xs, err = m.scopedExchanges(ctx, xsc)
		}
		if err != nil {
			return d, fmt.Errorf("discover ladders: %w", err)
		}
		seen := map[string]bool{}
		for _, x := range xs {
			seen[x.Vhost] = true
		}
		for _, v := range all {
			if !seen[v] {
				d.Hidden = append(d.Hidden, v)
			}
		}
	} else {
		for _, v := range vhosts {
			vsc := sc
			vsc.Vhost = v
			vqs, err := m.scopedQueues(ctx, vsc)
			var vxs []apiExchange
			if err == nil {
				vxs, err = m.scopedExchanges(ctx, vsc)
			}
			if errors.Is(m.accessError(ctx, v, err), ErrNoAccess) {
				d.Hidden = append(d.Hidden, v)
				continue
			}
			if err != nil {
				return d, fmt.Errorf("discover ladders in vhost %q: %w", v, err)
			}
			for i := range vqs {
				vqs[i].Vhost = v
			}
			for i := range vxs {
				vxs[i].Vhost = v
			}
			qs, xs = append(qs, vqs...), append(xs, vxs...)
		}
	}
	bs, complete, err := m.discoveryBindings(ctx, vhosts, xs)
	if err != nil {
		return d, fmt.Errorf("discover ladders: %w", err)
	}
	byVhost := map[string]*apiDefinitions{}
	queues := map[string][]apiQueue{}
	def := func(v string) *apiDefinitions {
		if byVhost[v] == nil {
			byVhost[v] = &apiDefinitions{}
		}
		return byVhost[v]
	}
	for _, q := range qs {
		def(q.Vhost)
		queues[q.Vhost] = append(queues[q.Vhost], q)
	}
	for _, x := range xs {
		def(x.Vhost).Exchanges = append(def(x.Vhost).Exchanges, x)
	}
	for _, b := range bs {
		def(b.Vhost).Bindings = append(def(b.Vhost).Bindings, b)
	}
	var names []string
	for v := range byVhost {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		defs := byVhost[v]
		snap := topology.Snapshot{Vhost: v, Queues: m.toQueues(queues[v]), Exchanges: mapExchanges(defs.Exchanges), Bindings: mapBindings(defs.Bindings)}
		found := topology.Discover(snap)
		if len(found) == 0 {
			continue
		}
		if !complete {
			// A plan may bind from an exchange not named like a ladder's
			// (a Celery worker's exchange to its queue): read those too,
			// or they would read as missing.
			more, err := m.bindingsBySource(ctx, v, planSourcesBeyond(found, snap))
			if err != nil {
				return d, fmt.Errorf("discover ladders: %w", err)
			}
			if len(more) > 0 {
				snap.Bindings = mapBindings(append(defs.Bindings, more...))
				found = topology.Discover(snap)
			}
		}
		d.Snapshots[v] = snap
		d.Found = append(d.Found, found...)
	}
	sort.Strings(d.Hidden)
	return d, nil
}

// planSourcesBeyond lists the exchanges the found ladders' plans bind
// from that the snapshot holds no exchange of.
func planSourcesBeyond(found []topology.Found, snap topology.Snapshot) []string {
	seen := map[string]bool{}
	for _, x := range snap.Exchanges {
		seen[x.Name] = true
	}
	var out []string
	for _, f := range found {
		for _, b := range f.Ladder.Plan().Bindings {
			if !seen[b.Source] {
				seen[b.Source] = true
				out = append(out, b.Source)
			}
		}
	}
	return out
}

// discoveryBindings reads the bindings of the candidate exchanges: one by
// one while they are few, else every binding of the vhost (or of the
// broker) in one request; complete says it read them all.
func (m *Management) discoveryBindings(ctx context.Context, vhosts []string, xs []apiExchange) (bs []apiBinding, complete bool, err error) {
	var cands []apiExchange
	for _, x := range xs {
		if x.Name != "amq.direct" {
			cands = append(cands, x)
		}
	}
	if len(cands) <= maxSourceRequests {
		var out []apiBinding
		byVhost := map[string][]string{}
		for _, x := range cands {
			byVhost[x.Vhost] = append(byVhost[x.Vhost], x.Name)
		}
		for v, srcs := range byVhost {
			vbs, err := m.bindingsBySource(ctx, v, srcs)
			if err != nil {
				return nil, false, err
			}
			for i := range vbs {
				vbs[i].Vhost = v
			}
			out = append(out, vbs...)
		}
		return out, false, nil
	}
	cols := url.Values{"columns": {bindingColumns}}
	if len(vhosts) != 1 {
		err = m.get(ctx, "bindings", cols, &bs)
		return bs, err == nil, err
	}
	if err := m.get(ctx, "bindings/"+url.PathEscape(vhosts[0]), cols, &bs); err != nil {
		return nil, false, err
	}
	for i := range bs {
		bs[i].Vhost = vhosts[0]
	}
	return bs, true, nil
}
