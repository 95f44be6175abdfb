package ops

import (
	"context"
	"slices"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// vhostsRead records what DelaysIn asks for; its answers are empty. It
// tests which vhosts are read and when, not what a broker answers.
type vhostsRead struct {
	all     []string
	version topology.Version
	delays  []string
	retry   []string
}

func (r *vhostsRead) Vhosts(context.Context) ([]string, error) { return r.all, nil }
func (r *vhostsRead) Version(context.Context) (topology.Version, error) {
	return r.version, nil
}
func (r *vhostsRead) DelaySnapshot(_ context.Context, vhost string) (topology.Snapshot, map[string]int64, error) {
	r.delays = append(r.delays, vhost)
	return topology.Snapshot{Vhost: vhost}, nil, nil
}

// Policies is where the delayed-retry read begins (ReadRetryListed): the
// candidates come from the inventory's listing.
func (r *vhostsRead) Policies(_ context.Context, vhost string) (topology.Policies, error) {
	r.retry = append(r.retry, vhost)
	return topology.Policies{}, nil
}
func (r *vhostsRead) RetryStats(_ context.Context, _ string, qs []topology.RetryQueue) ([]topology.RetryQueue, error) {
	return qs, nil
}

// Without named vhosts every vhost but the hidden ones is read; delayed
// retry is read from 4.3 only.
func TestDelaysInReadsTheVhostsAsked(t *testing.T) {
	v43 := topology.Version{Major: 4, Minor: 3, Patch: 6}
	v40 := topology.Version{Major: 4, Minor: 0, Patch: 5}
	for _, tc := range []struct {
		name      string
		version   topology.Version
		req       DelaysRequest
		wantRead  []string
		wantRetry []string
	}{
		{"named", v43, DelaysRequest{Vhosts: []string{"b"}}, []string{"b"}, []string{"b"}},
		{"every readable", v43, DelaysRequest{Hidden: []string{"secret"}}, []string{"/", "a"}, []string{"/", "a"}},
		{"before 4.3", v40, DelaysRequest{}, []string{"/", "a", "secret"}, nil},
	} {
		r := &vhostsRead{all: []string{"/", "a", "secret"}, version: tc.version}
		invs, err := DelaysIn(context.Background(), r, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.delays, tc.wantRead) || !slices.Equal(r.retry, tc.wantRetry) || len(invs) != len(tc.wantRead) {
			t.Errorf("%s: read %v, retry %v, %d inventories; want %v, %v", tc.name, r.delays, r.retry, len(invs), tc.wantRead, tc.wantRetry)
		}
		for _, inv := range invs {
			if inv.RetryRead != (tc.wantRetry != nil) {
				t.Errorf("%s: %s RetryRead %v", tc.name, inv.Vhost, inv.RetryRead)
			}
		}
	}
}
