package broker_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// recorder collects the URLs a management client requested.
type recorder struct {
	mu   sync.Mutex
	urls []*url.URL
}

func record(t *testing.T, cfg broker.Config) (*broker.Management, *recorder) {
	t.Helper()
	// The whole vhost's listing beside 10,000 queues takes seconds on a
	// busy machine; that cost is what the scoped reads avoid, not a failure.
	cfg.Timeout = time.Minute
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	broker.RecordRequests(m, func(req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.urls = append(r.urls, req.URL)
	})
	return m, r
}

// take returns the URLs recorded since the last take.
func (r *recorder) take() []*url.URL {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.urls
	r.urls = nil
	return out
}

// applyTargetWithDeadLetters declares the target queue orders, which
// dead-letters through orders.dlx into orders.dead, and LAD.DONE, which
// the broker's filter (it ignores case) lets through for ladder lad.
func applyTargetWithDeadLetters(t *testing.T, e env) {
	t.Helper()
	p := topology.Plan{
		Exchanges: []topology.Exchange{{Name: "orders.dlx", Type: "fanout", Durable: true}},
		Queues: []topology.Queue{
			{Name: "orders", Durable: true, Args: topology.Args{"x-dead-letter-exchange": "orders.dlx"}},
			{Name: "orders.dead", Durable: true},
			{Name: "LAD.DONE", Durable: true},
		},
		Bindings: []topology.Binding{{Source: "orders.dlx", Destination: "orders.dead", DestinationType: topology.ToQueue}},
	}
	if _, err := e.conn.Apply(ctxFor(t, 30*time.Second), p); err != nil {
		t.Fatal(err)
	}
}

func queueNames(qs []topology.Queue) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out
}

func foundNamed(t *testing.T, snap topology.Snapshot, name string) topology.Found {
	t.Helper()
	for _, f := range topology.Discover(snap) {
		if f.Ladder.Name == name {
			return f
		}
	}
	t.Fatalf("no ladder %s in %s", name, snap.Vhost)
	return topology.Found{}
}

// adminCall sends one management request with the test broker's own
// (administrator) credentials.
func adminCall(t *testing.T, method, path, body string) {
	t.Helper()
	cfg := brokertest.Require(t).Config
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(cfg.MgmtURL, "/")+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pw)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %s", method, path, res.Status)
	}
}

// readOnlyUser creates a user with the monitoring tag and only the read
// permission given, in the given vhost only, and returns a Config for it.
func readOnlyUser(t *testing.T, vhost, read string) broker.Config {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name, pass := "rungs-test-reader-"+hex.EncodeToString(b), "pw-"+hex.EncodeToString(b)
	adminCall(t, http.MethodPut, "/api/users/"+name, `{"password":"`+pass+`","tags":"monitoring"}`)
	t.Cleanup(func() { adminCall(t, http.MethodDelete, "/api/users/"+name, "") })
	adminCall(t, http.MethodPut, "/api/permissions/"+url.PathEscape(vhost)+"/"+name, `{"configure":"","write":"","read":"`+read+`"}`)
	cfg := brokertest.Require(t).Config
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, pass)
	cfg.URL = u.String()
	cfg.Vhost = vhost
	return cfg
}

// A user who may read some vhosts only: discovery finds the ladders of
// those and names the others in one line, and a read of a hidden vhost is
// one clear error, not two 404s. Such a user may still purge a ladder's
// queue: RabbitMQ lets read permission purge, on every version measured.
func TestUserWhoSeesSomeVhosts(t *testing.T) {
	t.Parallel()
	seen := newEnv(t)
	hidden := brokertest.NewVhost(t).Vhost
	l := ladder(t, seen, topology.Ladder{Name: "lad", Layout: "direct", Unit: time.Minute, Levels: 2, Radix: 2, QueueType: topology.Classic})
	seen.apply(t, l)
	top := l.Rungs()[0].Queue
	msgs := make([]broker.Message, 3)
	for i := range msgs {
		msgs[i] = broker.Message{RoutingKey: top, Body: []byte("x"), Persistent: true}
	}
	ctx := ctxFor(t, time.Minute)
	if res, err := seen.conn.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
		t.Fatalf("publish: %+v, %v", res, err)
	}

	cfg := readOnlyUser(t, seen.vhost, ".*")
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.DiscoverLadders(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range d.Found {
		found = append(found, f.Ladder.Vhost+"/"+f.Ladder.Name)
	}
	if !reflect.DeepEqual(found, []string{seen.vhost + "/lad"}) {
		t.Errorf("the reader discovered %v, want only %s/lad", found, seen.vhost)
	}
	if i := sort.SearchStrings(d.Hidden, hidden); i == len(d.Hidden) || d.Hidden[i] != hidden {
		t.Errorf("Hidden = %v, want it to name %s", d.Hidden, hidden)
	}
	if msg := d.HiddenError().Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, hidden) || strings.Contains(msg, seen.vhost) {
		t.Errorf("hidden vhosts line = %q", msg)
	}

	one, err := m.DiscoverLadders(ctx, []string{hidden})
	if err != nil || !reflect.DeepEqual(one.Hidden, []string{hidden}) || len(one.Found) != 0 {
		t.Errorf("discovery in the hidden vhost = %+v, %v; want it hidden", one, err)
	}
	_, snapErr := m.Snapshot(ctx, hidden)
	_, statsErr := m.LadderStats(ctx, topology.Scope{Vhost: hidden, Names: []string{"x"}})
	for _, err := range []error{snapErr, statsErr} {
		if !errors.Is(err, broker.ErrNoAccess) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), hidden) {
			t.Errorf("reading the hidden vhost: %v; want one line naming it", err)
		}
	}
	if _, err := m.Snapshot(ctx, seen.vhost); err != nil {
		t.Errorf("the reader's snapshot of its own vhost: %v", err)
	}

	// A watcher whose read permission matches no queue still reads the
	// ladder through the management API, and may not purge it.
	watcher := readOnlyUser(t, seen.vhost, "^$")
	wm, err := broker.NewManagement(watcher)
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := wm.LadderSnapshot(ctx, l.Scope()); err != nil || len(snap.Queues) != len(l.Plan().Queues) {
		t.Errorf("the watcher's snapshot holds %d queues, %v; want the ladder's %d", len(snap.Queues), err, len(l.Plan().Queues))
	}
	wconn, err := broker.Dial(ctx, watcher)
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	if n, err := wconn.Purge(ctx, top); err == nil || !strings.Contains(err.Error(), "ACCESS_REFUSED") {
		t.Errorf("a user with read permission ^$ purged %d messages, %v; want ACCESS_REFUSED", n, err)
	}

	reader, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if n, err := reader.Purge(ctx, top); err != nil || n != 3 {
		t.Errorf("a user with only read permission purged %d messages, %v; measured: RabbitMQ lets it purge all 3", n, err)
	}
}
