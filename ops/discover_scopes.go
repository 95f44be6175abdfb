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

// DiscoverRequest is what discover lists: the ladders of Vhost, or with
// AllVhosts those of every vhost the user may read.
type DiscoverRequest struct {
	Vhost     string
	AllVhosts bool
}

// Vhosts are the vhosts to read, nil for every one.
func (r DiscoverRequest) Vhosts() []string {
	if r.AllVhosts {
		return nil
	}
	return []string{r.Vhost}
}

// Hidden judges the vhosts the discovery could not read (hidden, the
// discovery's HiddenError): the vhost asked for is a refusal (err); one
// of every vhost is a warning to show beside what was found.
func (r DiscoverRequest) Hidden(hidden error) (warning, err error) {
	if r.AllVhosts {
		return hidden, nil
	}
	return nil, hidden
}

// Where says where nothing was found, for user: the vhost, or every vhost
// the user may read.
func (r DiscoverRequest) Where(user string) string {
	if r.AllVhosts {
		return "any vhost " + user + " may read"
	}
	return r.Vhost
}
