package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// recordingProxy forwards to the real management API and records every
// request's URL.
type recordingProxy struct {
	mu   sync.Mutex
	urls []*url.URL
}

func (p *recordingProxy) take() []*url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.urls
	p.urls = nil
	return out
}

// recordMgmt points env's management URL at a recording proxy of it.
func recordMgmt(t *testing.T, env map[string]string) *recordingProxy {
	t.Helper()
	target, err := url.Parse(env["RUNGS_MGMT_URL"])
	if err != nil {
		t.Fatal(err)
	}
	user := target.User
	target.User = nil
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := *r.URL
		p.mu.Lock()
		p.urls = append(p.urls, &u)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pu, _ := url.Parse(srv.URL)
	pu.User = user
	env["RUNGS_MGMT_URL"] = pu.String()
	return p
}

// status, trace and doctor read only the objects of the ladders they check: no
// definitions, no listing of every queue or binding of the vhost, and no
// request that names one of the other queues beside the ladder.
func TestStatusTraceAndDoctorReadTheLaddersObjectsOnly(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "jobs", "--max-delay", "1m", "--target", "orders")
	c := dial(t, cfg)
	others := topology.Plan{}
	for i := range 200 {
		others.Queues = append(others.Queues, topology.Queue{Name: fmt.Sprintf("other-%03d", i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Apply(ctx, others); err != nil {
		t.Fatal(err)
	}
	rec := recordMgmt(t, env)
	vhostPath := url.PathEscape(cfg.Vhost)
	check := func(args ...string) {
		t.Helper()
		for _, u := range rec.take() {
			p := u.EscapedPath()
			// status of a healthy named ladder reads its queues by name:
			// no listing the broker would evaluate over every queue.
			if args[0] == "status" && p == "/api/queues/"+vhostPath {
				t.Errorf("rungs %s listed the vhost's queues: %s", strings.Join(args, " "), u)
			}
			listing := p == "/api/queues/"+vhostPath || p == "/api/exchanges/"+vhostPath
			// doctor of a whole vhost also takes the inventory of its
			// delays outside ladders: every queue and exchange, in pages
			// of a few columns (the management API cannot filter by
			// arguments). Nothing else lists the vhost.
			inventory := len(args) == 1 && args[0] == "doctor" && u.Query().Get("page") != "" && u.Query().Get("columns") != ""
			if strings.Contains(p, "/definitions") || strings.HasPrefix(p, "/api/bindings") ||
				listing && u.Query().Get("use_regex") != "true" && !inventory || strings.Contains(p, "other-") {
				t.Errorf("rungs %s requested %s, which is not the ladder's", strings.Join(args, " "), u)
			}
		}
	}
	for _, args := range [][]string{
		{"status", "--ladder", "jobs"},
		{"trace", "90s", "--ladder", "jobs"},
		{"trace", "90s", "--ladder", "jobs", "--to", "orders"},
		{"doctor", "--ladder", "jobs"},
		{"doctor"},
	} {
		out := mustRun(t, env, args...)
		if args[0] == "trace" && !strings.Contains(out, "checked: the broker's bindings route it exactly this way") {
			t.Errorf("rungs %s did not check the route:\n%s", strings.Join(args, " "), out)
		}
		// The target is no object of the ladder's names: it is read by
		// name, as a whole snapshot holds it.
		if args[0] == "status" && strings.Contains(out, "missing") {
			t.Errorf("rungs %s misses the target:\n%s", strings.Join(args, " "), out)
		}
		if args[0] == "doctor" && !strings.Contains(out, "matches its plan") {
			t.Errorf("rungs %s did not find the ladder whole:\n%s", strings.Join(args, " "), out)
		}
		check(args...)
	}

	// A stray binding into a rung from an exchange no ladder owns is drift
	// to doctor, which reads every binding into the ladder's queues.
	snap := vhostSnapshot(t, cfg)
	var rung string
	for _, q := range snap.Queues {
		if strings.Contains(q.Name, ".rung.") {
			rung = q.Name
			break
		}
	}
	stray := topology.Plan{
		Exchanges: []topology.Exchange{{Name: "stray", Type: "direct", Durable: true}},
		Bindings:  []topology.Binding{{Source: "stray", Destination: rung, DestinationType: topology.ToQueue, RoutingKey: "x"}},
	}
	if _, err := c.Apply(ctx, stray); err != nil {
		t.Fatal(err)
	}
	rec.take()
	for _, args := range [][]string{{"doctor", "--ladder", "jobs"}, {"doctor"}} {
		code, out, errs := run(t, env, args...)
		if code != 1 || !strings.Contains(out, "stray") {
			t.Errorf("rungs %s with a stray binding into %s: exit %d, want 1 naming it\n%s%s", strings.Join(args, " "), rung, code, out, errs)
		}
		check(args...)
	}
}
