package ops

import (
	"errors"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func TestFindLadder(t *testing.T) {
	found := []topology.Found{
		{Ladder: topology.Ladder{Name: "jobs", Layout: "direct"}},
		{Ladder: topology.Ladder{Name: "jobs", Layout: "prefix"}},
		{Ladder: topology.Ladder{Name: "orders", Layout: "prefix"}},
		{Ladder: topology.Ladder{Name: "ordinals", Layout: "prefix"}},
	}
	cases := map[string]struct {
		q      LadderQuery
		want   topology.Ladder
		errMsg string
	}{
		"exact":                  {q: LadderQuery{Name: "orders"}, want: found[2].Ladder},
		"exact beats prefix":     {q: LadderQuery{Name: "orders", Prefix: true}, want: found[2].Ladder},
		"unique prefix":          {q: LadderQuery{Name: "ordi", Prefix: true}, want: found[3].Ladder},
		"prefix not asked":       {q: LadderQuery{Name: "ordi"}, errMsg: ErrNoLadder.Error()},
		"ambiguous prefix":       {q: LadderQuery{Name: "ord", Prefix: true}, errMsg: `"ord" matches orders, ordinals`},
		"one name, two layouts":  {q: LadderQuery{Name: "jobs"}, errMsg: `2 ladders are named "jobs" (direct, prefix)`},
		"layout picks one":       {q: LadderQuery{Name: "jobs", Layout: "prefix"}, want: found[1].Ladder},
		"layout that is not one": {q: LadderQuery{Name: "orders", Layout: "direct"}, errMsg: ErrNoLadder.Error()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := FindLadder(found, tc.q)
			if tc.errMsg != "" {
				if err == nil || err.Error() != tc.errMsg {
					t.Fatalf("err %v, want %q", err, tc.errMsg)
				}
				var amb *AmbiguousLadderError
				if errors.Is(err, ErrNoLadder) == errors.As(err, &amb) {
					t.Errorf("err %v is neither or both of ErrNoLadder and ambiguous", err)
				}
				return
			}
			if err != nil || !SameLadder(f.Ladder, tc.want) {
				t.Fatalf("found %+v, %v", f.Ladder, err)
			}
		})
	}
	if SameLadder(found[0].Ladder, found[1].Ladder) {
		t.Error("one name in two layouts is one ladder")
	}
	other := found[2].Ladder
	other.Vhost = "elsewhere"
	if SameLadder(found[2].Ladder, other) {
		t.Error("one name in two vhosts is one ladder")
	}
}
