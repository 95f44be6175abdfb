package broker

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A user who may not list policies (a refusal a real broker gives only to
// some tags): the candidates are still found, through the listing sorted
// on the merged policy keys, and described by the policy the broker
// names. A listing that fails is one clear error, and nothing is returned.
func TestRetryCandidatesWithoutPolicies(t *testing.T) {
	v43 := topology.Version{Major: 4, Minor: 3, Patch: 6}
	f := &fakeAPI{handler: func(w http.ResponseWriter, r *http.Request) bool {
		p := r.URL.EscapedPath()
		switch {
		case strings.HasPrefix(p, "/api/policies/"), strings.HasPrefix(p, "/api/operator-policies/"):
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"Not management user"}`))
		case p == "/api/queues/v" && r.URL.Query().Get("sort") == "arguments.x-delayed-retry-type":
			_, _ = w.Write([]byte(`{"page":1,"page_count":1,"items":[
				{"name":"by-arg","type":"quorum","arguments":{"x-delayed-retry-type":"failed","x-delayed-retry-min":1000}},
				{"name":"plain","type":"quorum","arguments":{}}]}`))
		case p == "/api/queues/v" && r.URL.Query().Get("sort") == "effective_policy_definition.delayed-retry-type":
			_, _ = w.Write([]byte(`{"page":1,"page_count":1,"items":[
				{"name":"by-policy","type":"quorum","arguments":{},"policy":"slow","effective_policy_definition":{"delayed-retry-type":"all","delayed-retry-min":2000,"delayed-retry-max":4000}},
				{"name":"plain","type":"quorum","arguments":{},"policy":null,"effective_policy_definition":{}}]}`))
		case p == "/api/queues/broken":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			return false
		}
		return true
	}}
	m := newFake(t, f, Config{Timeout: 5 * time.Second})
	qs, err := m.RetryCandidates(context.Background(), "v", v43)
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.RetryQueue{
		{Name: "by-arg", Type: "failed", Min: time.Second, Source: "argument"},
		{Name: "by-policy", Type: "all", Min: 2 * time.Second, Max: 4 * time.Second, Source: "policy", Policy: "slow"},
	}
	if len(qs) != len(want) || qs[0] != want[0] || qs[1] != want[1] {
		t.Errorf("RetryCandidates = %+v, want %+v", qs, want)
	}
	if qs, err := m.RetryCandidates(context.Background(), "broken", v43); err == nil || qs != nil || strings.Contains(err.Error(), fakePassword) {
		t.Errorf("a failed listing: %+v %v", qs, err)
	}
}
