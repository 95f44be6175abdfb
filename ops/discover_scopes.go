package ops

import "github.com/rungs-dev/rungs/topology"

// ScopesByVhost groups ladders found across vhosts (a discovery lists
// them vhost by vhost) into one scope per vhost, each naming its ladders,
// so that each vhost is observed once with what it holds.
func ScopesByVhost(found []topology.Found) []Scope {
	var scopes []Scope
	for _, f := range found {
		if n := len(scopes); n > 0 && scopes[n-1].Vhost == f.Ladder.Vhost {
			scopes[n-1].Ladders = append(scopes[n-1].Ladders, f.Ladder.Name)
			continue
		}
		scopes = append(scopes, Scope{Vhost: f.Ladder.Vhost, Ladders: []string{f.Ladder.Name}})
	}
	return scopes
}
