package topology

import (
	"reflect"
	"testing"
)

func TestLostMembersAndQuorum(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for _, tc := range []struct {
		members, online []string
		lost            []string
		quorum          bool
	}{
		{nil, nil, nil, true}, // classic, or not reported
		{abc, nil, nil, true}, // online not reported: unknown
		{abc, abc, nil, true}, // all online
		{abc, []string{"c", "a"}, []string{"b"}, true},
		{abc, []string{"a"}, []string{"b", "c"}, false},
		{abc, []string{}, abc, false},
		{[]string{"a", "b"}, []string{"a"}, []string{"b"}, false}, // 1 of 2 is no majority
		{[]string{"a", "b", "c", "d", "e"}, []string{"a", "b", "c"}, []string{"d", "e"}, true},
	} {
		s := QueueStats{Members: tc.members, Online: tc.online}
		if got := s.LostMembers(); !reflect.DeepEqual(got, tc.lost) || s.HasQuorum() != tc.quorum {
			t.Errorf("members %v online %v: lost %v quorum %v; want %v %v", tc.members, tc.online, got, s.HasQuorum(), tc.lost, tc.quorum)
		}
	}
}
