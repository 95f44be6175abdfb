package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// doctor on a healthy quorum ladder: every broker check passes, the
// feature flags a quorum ladder needs are named, and the exit code is 0.
// Then one binding goes missing and a rung gets a consumer: exit 1, and
// the report says what is wrong.
func TestDoctorChecksBrokerAndLadders(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "jobs", "--layout", "direct", "--levels", "4", "--radix", "2", "--queue-type", "quorum")
	out := mustRun(t, env, "doctor")
	mgmt, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ov, err := mgmt.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RabbitMQ " + ov.RabbitMQVersion + ",", "AMQP accepts the credentials", "rabbitmq_management", "quorum_queue is enabled", "stream_queue is enabled", "ladder jobs", "matches its plan", "no problems found"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	// Damage: delete a binding.
	l, _ := topology.Ladder{Name: "jobs", Vhost: cfg.Vhost, Layout: "direct", Levels: 4, Radix: 2, QueueType: topology.Quorum}.Normalize()
	b := l.Plan().Bindings[1]
	unbind(t, cfg, b)
	code, out, _ := run(t, env, "doctor", "--ladder", "jobs", "--json")
	var rep struct {
		OK       bool
		Problems int
		Checks   []check
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != ExitError || rep.OK || rep.Problems == 0 {
		t.Fatalf("doctor after damage: exit %d %+v", code, rep)
	}
	found := false
	for _, ch := range rep.Checks {
		if ch.Status == checkProblem && strings.Contains(ch.Text, "missing binding "+b.ID()) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the missing binding is not reported: %+v", rep.Checks)
	}
	// status reads a named ladder's queues by name (topology.Scope.Bound),
	// its planned ones included: the rung that lost its binding is still
	// read, so the drift is the binding, not a missing queue.
	_, sout, serr := run(t, env, "status", "--ladder", "jobs")
	if !strings.Contains(sout+serr, b.ID()) || strings.Contains(sout+serr, "missing queue") {
		t.Errorf("status after losing %s:\n%s%s", b.ID(), sout, serr)
	}
	if code, out, _ := run(t, env, "doctor", "--ladder", "ghost"); code != ExitError || !strings.Contains(out, `no ladder "ghost"`) {
		t.Fatalf("doctor --ladder ghost: exit %d\n%s", code, out)
	}
}

// unbind deletes one binding through the management API, as an operator
// clicking in the management UI would.
func unbind(t *testing.T, cfg broker.Config, b topology.Binding) {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	kind := "q"
	if b.DestinationType == topology.ToExchange {
		kind = "e"
	}
	props := b.RoutingKey
	if props == "" {
		props = "~"
	}
	path := strings.Join([]string{cfg.MgmtURL, "api/bindings", url.PathEscape(cfg.Vhost), "e", url.PathEscape(b.Source), kind, url.PathEscape(b.Destination), url.PathEscape(props)}, "/")
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, path, nil)
	pw, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pw)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE %s: %s", path, res.Status)
	}
}

func TestVersionAndEveryCommandHasExamples(t *testing.T) {
	code, out, _ := run(t, offline, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "rungs version ") {
		t.Fatalf("--version: %d %q", code, out)
	}
	e := &env{IO: IO{Getenv: func(string) string { return "" }}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Hidden {
				continue
			}
			if sub.Example == "" {
				t.Errorf("%s has no examples in --help", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(e.rootCommand())
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__rungs_", "zsh": "#compdef rungs", "fish": "complete -c rungs", "powershell": "Register-ArgumentCompleter"} {
		code, out, errs := run(t, offline, "completion", shell)
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d %s (%d bytes)", shell, code, errs, len(out))
		}
	}
	if code, _, _ := run(t, offline, "completion", "tcsh"); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
	// Static completions need no broker.
	_, out, _ := run(t, offline, "__complete", "plan", "--layout", "")
	for _, l := range topology.LayoutNames() {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("--layout completion lacks %s:\n%s", l, out)
		}
	}
}

// --ladder completes the ladders discovered on the broker.
func TestLadderCompletionDiscovers(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "alpha", "--layout", "direct", "--levels", "3", "--radix", "2")
	mustRun(t, env, "apply", "--ladder", "beta", "--levels", "3", "--radix", "2")
	_, out, _ := run(t, env, "__complete", "trace", "--ladder", "al")
	if !strings.Contains(out, "alpha\tdirect") || strings.Contains(out, "beta") {
		t.Fatalf("completion:\n%s", out)
	}
}

// A broker that cannot carry a quorum ladder safely: RabbitMQ 3.9 (no
// at-least-once dead-lettering) without the stream_queue flag. The fake
// management API serves what such a broker reports; a real one of that
// version is not at hand.
func TestDoctorNamesQuorumPrerequisites(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	srv := fakeManagement(t, l, "3.9.13", "rabbit@old", "disabled")
	vars := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": srv.URL}
	code, out, _ := run(t, vars, "doctor", "--timeout", "2s")
	if code != ExitError {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"✗ AMQP:",
		"✓ node rabbit@old runs rabbitmq_management",
		"✗ ladder jobs uses at-least-once dead-lettering, which needs RabbitMQ 3.10+",
		"✓ quorum_queue is enabled",
		"✗ stream_queue is not enabled; ladder jobs needs it",
		"✓ matches its plan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
}

// Right after a node boots, the management API can list it with no
// applications yet (seen on 4.0.5): doctor must not call that a missing
// management plugin, and the node answering the API runs it by definition.
func TestDoctorTrustsTheNodeThatAnswers(t *testing.T) {
	answers := map[string]any{
		"/api/overview": map[string]any{"rabbitmq_version": "4.0.5", "erlang_version": "27.2", "node": "rabbit@a"},
		"/api/nodes": []any{
			map[string]any{"name": "rabbit@a", "running": true, "applications": []any{map[string]any{"name": "rabbitmq_prelaunch"}}},
			map[string]any{"name": "rabbit@b", "running": true, "applications": []any{}},
		},
		"/api/feature-flags":   []any{},
		"/api/definitions/%2F": map[string]any{},
		"/api/queues/%2F":      []any{},
	}
	srv := serveAnswers(t, answers)
	vars := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": srv.URL}
	_, out, _ := run(t, vars, "doctor", "--timeout", "2s")
	if strings.Contains(out, "does not run rabbitmq_management") {
		t.Errorf("false alarm:\n%s", out)
	}
	for _, want := range []string{"node rabbit@a serves this management API", "node rabbit@b has not reported its plugins yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
}

// On a RabbitMQ that loses BCC keys, doctor flags the broker and every
// direct ladder, and apply declares nothing. The fake management API plays
// a 3.13.1 broker; AMQP is unreachable, so apply must stop before it.
func TestBrokenBCCVersionsAreRefused(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Layout: "direct", Levels: 2, Radix: 4}.Normalize()
	srv := fakeManagement(t, l, "3.13.1", "rabbit@b", "enabled")
	vars := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": srv.URL}
	_, out, _ := run(t, vars, "doctor", "--timeout", "2s")
	for _, want := range []string{
		"RabbitMQ 3.13.1 drops BCC routing keys when it dead-letters a message",
		"✗ this ladder routes by BCC keys, which this broker loses at every rung",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut := run(t, vars, "apply", "--ladder", "other", "--layout", "direct", "--max-delay", "10s", "--timeout", "2s")
	if code == ExitOK || !strings.Contains(errOut, "nothing was declared") || !strings.Contains(errOut, "3.13.3") || strings.Contains(errOut, "AMQP") {
		t.Fatalf("apply on 3.13.1: exit %d\n%s\n%s", code, out, errOut)
	}
	// A new ladder is prefix there (TestNewLadderOn3131IsPrefix), so the
	// default is not refused for BCC.
	_, _, errOut = run(t, vars, "apply", "--ladder", "other", "--max-delay", "10s", "--timeout", "2s")
	if strings.Contains(errOut, "BCC") {
		t.Fatalf("default apply on 3.13.1 refused for BCC: %s", errOut)
	}
	// The prefix layout does not depend on BCC and is not refused for it.
	_, _, errOut = run(t, vars, "apply", "--ladder", "other", "--layout", "prefix", "--max-delay", "10s", "--timeout", "2s")
	if strings.Contains(errOut, "BCC") {
		t.Fatalf("prefix apply refused for BCC: %s", errOut)
	}
}

// fakeManagement serves what a broker of the given version, holding one
// ladder, reports to doctor and apply: overview, nodes, feature flags
// (stream_queue in the given state), definitions and queue statistics.
func fakeManagement(t *testing.T, l topology.Ladder, version, node, streamQueue string) *httptest.Server {
	t.Helper()
	defs := broker.PlanDefinitions(l.Plan(), "/")
	var queues []map[string]any
	for _, q := range defs.Queues {
		queues = append(queues, map[string]any{"name": q.Name, "durable": true, "auto_delete": false, "arguments": q.Arguments, "type": string(l.QueueType), "state": "running"})
	}
	answers := map[string]any{
		"/api/overview":        map[string]any{"rabbitmq_version": version, "erlang_version": "26.2", "node": node},
		"/api/nodes":           []any{map[string]any{"name": node, "running": true, "applications": []any{map[string]any{"name": "rabbitmq_management"}}}},
		"/api/feature-flags":   []any{map[string]any{"name": "quorum_queue", "state": "enabled"}, map[string]any{"name": "stream_queue", "state": streamQueue}},
		"/api/definitions/%2F": defs,
		"/api/queues/%2F":      queues,
		"/api/exchanges/%2F":   defs.Exchanges,
	}
	// doctor reads the ladder's objects: its exchanges' bindings by source.
	for _, x := range defs.Exchanges {
		var bs []broker.DefBinding
		for _, b := range defs.Bindings {
			if b.Source == x.Name {
				bs = append(bs, b)
			}
		}
		answers["/api/exchanges/%2F/"+url.PathEscape(x.Name)+"/bindings/source"] = bs
	}
	return serveAnswers(t, answers)
}

// serveAnswers is a management API that answers each path with its JSON.
func serveAnswers(t *testing.T, answers map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.EscapedPath()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Has("page") {
			// A paged listing (filtered on a real broker; the client
			// checks the names itself).
			a = map[string]any{"items": a, "page_count": 1}
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Before 3.13 a quorum queue's dead-lettering retries without BCC keys, so
// a new quorum ladder there is prefix unless --layout says otherwise, and
// doctor warns about a direct quorum ladder it finds.
func TestNewQuorumLadderBefore313IsPrefix(t *testing.T) {
	existing, _ := topology.Ladder{Name: "jobs", Layout: "direct", Levels: 2, Radix: 4, QueueType: topology.Quorum}.Normalize()
	for version, wantLayout := range map[string]string{"3.10.8": "prefix", "3.12.14": "prefix", "3.13.7": "direct", "4.0.5": "direct"} {
		srv := fakeManagement(t, existing, version, "rabbit@b", "enabled")
		vars := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": srv.URL}
		code, out, errs := run(t, vars, "plan", "--ladder", "other", "--max-delay", "10s", "--timeout", "2s")
		if code == ExitUsage || !strings.Contains(out, wantLayout+` ladder "other"`) {
			t.Fatalf("%s: plan of a new quorum ladder: exit %d\n%s%s", version, code, out, errs)
		}
		if note := strings.Contains(errs, "is prefix, not direct"); note != (wantLayout == "prefix") {
			t.Errorf("%s: note %v, want %v:\n%s", version, note, wantLayout == "prefix", errs)
		}
		// Asked for, or classic: direct, whatever the version.
		for _, args := range [][]string{{"--layout", "direct"}, {"--queue-type", "classic"}} {
			_, out, errs := run(t, vars, append([]string{"plan", "--ladder", "other", "--max-delay", "10s", "--timeout", "2s"}, args...)...)
			if !strings.Contains(out, `direct ladder "other"`) || strings.Contains(errs, "is prefix, not direct") {
				t.Errorf("%s %v: want a direct ladder and no note:\n%s%s", version, args, out, errs)
			}
		}
		// The existing ladder keeps its layout; doctor warns on old brokers.
		_, out, _ = run(t, vars, "doctor", "--timeout", "2s")
		if warned := strings.Contains(out, "drop BCC keys when they retry a dead-lettering"); warned != (wantLayout == "prefix") {
			t.Errorf("%s: doctor warned %v, want %v:\n%s", version, warned, wantLayout == "prefix", out)
		}
	}
}
