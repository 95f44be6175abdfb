package topology

import "testing"

func TestParseVersion(t *testing.T) {
	cases := map[string]Version{
		"3.10.8":        {3, 10, 8},
		"4.0.5":         {4, 0, 5},
		"3.13.0-rc.1":   {3, 13, 0},
		"4.1.0+2.g1234": {4, 1, 0},
		"4.2":           {4, 2, 0},
		" 3.8.9 ":       {3, 8, 9},
	}
	for in, want := range cases {
		if got, ok := ParseVersion(in); !ok || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "unknown", "4", "x.1.2", "1.2.3.4", "-1.0.0", "0.0.1", "3.-1.0"} {
		if v, ok := ParseVersion(bad); ok || v.Known() {
			t.Errorf("ParseVersion(%q) = %v, %v; want unknown", bad, v, ok)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	v310, v40 := Version{3, 10, 8}, Version{4, 0, 5}
	if !v310.Less(v40) || v40.Less(v310) || v40.Less(v40) {
		t.Error("Less is not an order on 3.10.8 < 4.0.5")
	}
	if !v40.AtLeast(4, 0, 0) || v310.AtLeast(4, 0, 0) || (Version{}).AtLeast(3, 0, 0) {
		t.Error("AtLeast")
	}
	if (Version{}).String() != "unknown" || v40.String() != "4.0.5" {
		t.Error("String")
	}
}

func TestQuorumRulesByVersion(t *testing.T) {
	v310, v40, unknown := Version{3, 10, 8}, Version{4, 0, 5}, Version{}
	if v310.QuorumDefaultDeliveryLimit() != 0 || v40.QuorumDefaultDeliveryLimit() != 20 || unknown.QuorumDefaultDeliveryLimit() != 20 {
		t.Error("default delivery limit: none before 4.0, 20 from 4.0 (and when unknown)")
	}
	for _, c := range []struct {
		v    Version
		n    int64
		want int
	}{{v310, 5, 5}, {v310, 0, 0}, {v310, -1, -1}, {v40, 5, 5}, {v40, 0, 0}, {v40, -1, 0}} {
		if got := c.v.DeliveryLimitOf(c.n); got != c.want {
			t.Errorf("%v.DeliveryLimitOf(%d) = %d, want %d", c.v, c.n, got, c.want)
		}
	}
	if v310.QuorumOmitsZeroDeliveryCount() || !v40.QuorumOmitsZeroDeliveryCount() {
		t.Error("4.0 omits a zero x-delivery-count, 3.10 sends it")
	}
}

// RabbitMQ 3.13.0 to 3.13.2 lost BCC keys on dead-lettering; every other
// version, before or after, keeps them, and an unknown one is not assumed
// broken.
func TestLosesBCCOnDeadLetter(t *testing.T) {
	cases := map[string]bool{
		"3.10.8": false, "3.12.14": false, "3.13.0": true, "3.13.0-rc.1": true, "3.13.1": true,
		"3.13.2": true, "3.13.3": false, "3.13.7": false, "4.0.5": false, "4.1.0": false, "3.13": true, "": false, "garbage": false,
	}
	for s, want := range cases {
		v, _ := ParseVersion(s)
		if got := v.LosesBCCOnDeadLetter(); got != want {
			t.Errorf("%q: LosesBCCOnDeadLetter() = %v, want %v", s, got, want)
		}
	}
}

// Before 3.13 at-least-once dead-lettering retries without BCC keys; an
// unknown version is not assumed to.
func TestLosesBCCOnDeadLetterRetry(t *testing.T) {
	cases := map[string]bool{
		"3.10.8": true, "3.11.0": true, "3.12.14": true, "3.13.0": false, "3.13.3": false, "4.0.5": false, "": false, "garbage": false,
	}
	for s, want := range cases {
		v, _ := ParseVersion(s)
		if got := v.LosesBCCOnDeadLetterRetry(); got != want {
			t.Errorf("%q: LosesBCCOnDeadLetterRetry() = %v, want %v", s, got, want)
		}
	}
}

// A new ladder is prefix where direct would lose BCC keys: on 3.13.0 to
// 3.13.2 whatever its queue type, before 3.13 when its rungs are quorum.
func TestNewLadderLayout(t *testing.T) {
	cases := map[string][2]string{ // version: quorum, classic
		"3.10.8": {"prefix", "direct"}, "3.12.14": {"prefix", "direct"}, "3.13.0": {"prefix", "prefix"},
		"3.13.2": {"prefix", "prefix"}, "3.13.3": {"direct", "direct"}, "4.0.5": {"direct", "direct"},
		"4.3.6": {"direct", "direct"}, "": {"direct", "direct"},
	}
	for s, want := range cases {
		v, _ := ParseVersion(s)
		if got := [2]string{v.NewLadderLayout(Quorum), v.NewLadderLayout(Classic)}; got != want {
			t.Errorf("%q: NewLadderLayout(quorum, classic) = %v, want %v", s, got, want)
		}
	}
}

func TestQuorumRulesOf43(t *testing.T) {
	v310, v40, v43, v436, unknown := Version{3, 10, 8}, Version{4, 0, 5}, Version{4, 3, 0}, Version{4, 3, 6}, Version{}
	for _, c := range []struct {
		name string
		rule func(Version) bool
		want map[Version]bool
	}{
		{"a requeueing nack counts", Version.QuorumRequeueNackCounts, map[Version]bool{v310: true, v40: true, v43: false, v436: false, unknown: true}},
		{"x-acquired-count is stamped", Version.QuorumStampsAcquiredCount, map[Version]bool{v310: false, v40: false, v43: true, unknown: false}},
		{"purge takes expired", Version.QuorumPurgeTakesExpired, map[Version]bool{v310: false, v40: false, v436: true, unknown: false}},
		{"delayed retry", Version.QuorumDelayedRetry, map[Version]bool{v310: false, v40: false, v43: true, unknown: false}},
		{"a policy revives a stalled rung", Version.PolicyNudgeRevivesDeadLettering, map[Version]bool{v310: true, v40: true, v43: false, v436: false, unknown: true}},
		{"definitions ETag", Version.DefinitionsETag, map[Version]bool{v40: false, v43: false, {4, 3, 5}: true, v436: true, unknown: false}},
	} {
		for v, want := range c.want {
			if got := c.rule(v); got != want {
				t.Errorf("%s on %v: %v, want %v", c.name, v, got, want)
			}
		}
	}
	if got := Oldest(v436, unknown, v40, v43); got != v40 {
		t.Errorf("Oldest = %v, want 4.0.5", got)
	}
	if got := Oldest(unknown); got.Known() {
		t.Errorf("Oldest of nothing known = %v", got)
	}
}
