package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// SameLadder is the one identity rule for ladders: a ladder is its vhost,
// its name and its layout. Two layouts can discover ladders of the same
// name in one vhost (topology.Discover sorts them by name, then layout),
// so a name alone does not tell them apart.
func SameLadder(a, b topology.Ladder) bool {
	return a.Name == b.Name && a.Layout == b.Layout && a.Vhost == b.Vhost
}

// LadderQuery asks for a discovered ladder by name. Layout "" accepts any
// layout. Prefix lets a unique prefix of the name stand for it when no
// name matches exactly (the console's commands); the CLI wants the exact
// name.
type LadderQuery struct {
	Name   string
	Layout string
	Prefix bool
}

// ErrNoLadder says no discovered ladder answers a LadderQuery.
var ErrNoLadder = errors.New("no such ladder")

// AmbiguousLadderError says a query matches several ladders: one name in
// several layouts (Layouts set), or a prefix of several names.
type AmbiguousLadderError struct {
	Name    string
	Names   []string // the names a prefix matches
	Layouts []string // the layouts sharing the exact name
}

func (e *AmbiguousLadderError) Error() string {
	if len(e.Layouts) > 0 {
		return fmt.Sprintf("%d ladders are named %q (%s)", len(e.Layouts), e.Name, strings.Join(e.Layouts, ", "))
	}
	return fmt.Sprintf("%q matches %s", e.Name, strings.Join(e.Names, ", "))
}

// FindLadder looks a ladder up among the discovered ones: by exact name
// (and layout, if asked), then, with q.Prefix, by unique prefix. A name
// that several layouts share is ambiguous rather than the first of them,
// so that no command acts on a ladder the operator did not mean. It
// returns ErrNoLadder or an *AmbiguousLadderError.
func FindLadder(found []topology.Found, q LadderQuery) (topology.Found, error) {
	var exact, prefixed []topology.Found
	for _, f := range found {
		switch {
		case q.Layout != "" && f.Ladder.Layout != q.Layout:
		case f.Ladder.Name == q.Name:
			exact = append(exact, f)
		case q.Prefix && strings.HasPrefix(f.Ladder.Name, q.Name):
			prefixed = append(prefixed, f)
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	if len(exact) > 1 {
		e := &AmbiguousLadderError{Name: q.Name}
		for _, f := range exact {
			e.Layouts = append(e.Layouts, f.Ladder.Layout)
		}
		return topology.Found{}, e
	}
	switch len(prefixed) {
	case 0:
		return topology.Found{}, ErrNoLadder
	case 1:
		return prefixed[0], nil
	}
	e := &AmbiguousLadderError{Name: q.Name}
	for _, f := range prefixed {
		e.Names = append(e.Names, f.Ladder.Name)
	}
	return topology.Found{}, e
}

// Ladders are the discovered ladders' descriptions, in discovery order:
// what a timeline, a peek gate or a replay needs to name queues.
func Ladders(found []topology.Found) []topology.Ladder {
	ls := make([]topology.Ladder, len(found))
	for i, f := range found {
		ls[i] = f.Ladder
	}
	return ls
}
