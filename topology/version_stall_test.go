package topology

import "testing"

func TestStallRemedy(t *testing.T) {
	for _, c := range []struct {
		v       Version
		members int
		want    StallRemedy
	}{
		{Version{3, 10, 8}, 1, RemedyPolicy},
		{Version{3, 10, 8}, 3, RemedyPolicy},
		{Version{4, 0, 5}, 3, RemedyPolicy},
		{Version{}, 3, RemedyPolicy},
		{Version{4, 3, 6}, 1, RemedyRaRestart},
		{Version{4, 3, 6}, 2, RemedyLeaderMove},
		{Version{4, 3, 6}, 3, RemedyLeaderMove},
	} {
		if got := c.v.StallRemedy(c.members); got != c.want {
			t.Errorf("%v with %d members: %v, want %v", c.v, c.members, got, c.want)
		}
	}
	for v, want := range map[Version]bool{{3, 10, 8}: false, {4, 0, 5}: true, {4, 3, 6}: true, {}: false} {
		if got := v.QuorumMembershipAPI(); got != want {
			t.Errorf("%v: membership API %v, want %v", v, got, want)
		}
	}
}
