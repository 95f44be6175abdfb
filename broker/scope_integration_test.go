package broker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/ops"
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

// declareOthers declares n queues named prefix00000..., over a few
// channels without waiting for each answer, as a broker's other
// applications would have. They are exclusive to a connection the test
// keeps open: the cheapest queues every version (4.3 included) accepts,
// listed like any other and gone with the connection.
func declareOthers(t *testing.T, e env, prefix string, n int) {
	t.Helper()
	conn, err := amqp.DialConfig(e.cfg.URL, amqp.Config{Vhost: e.vhost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	const channels = 4
	errs := make(chan error, channels)
	for w := 0; w < channels; w++ {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := w; i < n; i += channels {
				if _, err := ch.QueueDeclare(fmt.Sprintf("%s%05d", prefix, i), false, false, true, true, nil); err != nil {
					errs <- err
					return
				}
			}
			// A declaration that waits for its answer flushes the ones
			// before it: a refused one has closed the channel by then.
			_, err := ch.QueueDeclare(fmt.Sprintf("%s%05d", prefix, w), false, false, true, false, nil)
			errs <- err
		}()
	}
	for w := 0; w < channels; w++ {
		if err := <-errs; err != nil {
			t.Fatalf("declare %d queues: %v", n, err)
		}
	}
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

// One ladder beside 10,000 other queues: its scoped snapshot and
// statistics fetch that ladder's objects only, filtered on the broker,
// and read it exactly as the whole vhost's snapshot does.
func TestLadderReadsBesideTenThousandQueues(t *testing.T) {
	e := newEnv(t)
	l := ladder(t, e, topology.Ladder{Name: "lad", Layout: "direct", Unit: time.Second, Levels: 3, Radix: 16, QueueType: topology.Classic, Targets: []string{"orders"}})
	other := ladder(t, e, topology.Ladder{Name: "lad2", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 2, QueueType: topology.Classic})
	applyTargetWithDeadLetters(t, e)
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), l.Plan()); err != nil {
		t.Fatal(err)
	}
	e.apply(t, other)
	start := time.Now()
	declareOthers(t, e, "other-", 10000)
	t.Logf("declared 10,000 queues in %s", time.Since(start).Round(time.Millisecond))

	m, rec := record(t, e.cfg)
	ctx := ctxFor(t, 2*time.Minute)
	full, err := m.Snapshot(ctx, e.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Queues) < 10000 {
		t.Fatalf("the vhost holds %d queues, want the 10,000 others too", len(full.Queues))
	}
	rec.take()

	sc := l.Scope()
	snap, err := m.LadderSnapshot(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"orders", "orders.dead"}
	for _, q := range l.Plan().Queues {
		want = append(want, q.Name)
	}
	sort.Strings(want)
	if got := queueNames(snap.Queues); !reflect.DeepEqual(got, want) {
		t.Fatalf("scoped snapshot holds queues\n%v\nwant\n%v", got, want)
	}
	if got, whole := foundNamed(t, snap, "lad"), foundNamed(t, full, "lad"); !reflect.DeepEqual(got, whole) {
		t.Errorf("the scoped snapshot reads the ladder as\n%+v\nthe whole vhost's as\n%+v", got, whole)
	}
	for _, u := range rec.take() {
		p := u.EscapedPath()
		scoped := u.Query().Get("name") != "" && u.Query().Get("use_regex") == "true"
		bySource := strings.HasSuffix(p, "/bindings/source")
		if strings.Contains(p, "/definitions") || !scoped && !bySource {
			t.Errorf("LadderSnapshot requested %s, which is not filtered to the ladder", u)
		}
	}

	live, err := m.LadderStats(ctx, sc.Covering(snap))
	if err != nil {
		t.Fatal(err)
	}
	if got := queueNames(live); !reflect.DeepEqual(got, want) {
		t.Fatalf("scoped statistics of queues\n%v\nwant\n%v", got, want)
	}
	urls := rec.take()
	if len(urls) != 1 || urls[0].EscapedPath() != "/api/queues/"+url.PathEscape(e.vhost) || urls[0].Query().Get("use_regex") != "true" {
		t.Fatalf("LadderStats requested %v, want one filtered queue listing", urls)
	}

	named, err := m.QueueStats(ctx, e.vhost, append(queueNames(snap.Queues), "lad.rung.09.1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := queueNames(named); !reflect.DeepEqual(got, want) {
		t.Fatalf("statistics by name of queues\n%v\nwant\n%v (a queue that is gone left out)", got, want)
	}
	urls = rec.take()
	if len(urls) != len(want)+1 {
		t.Errorf("QueueStats made %d requests for %d queues", len(urls), len(want)+1)
	}
	for _, u := range urls {
		if !strings.HasPrefix(u.EscapedPath(), "/api/queues/"+url.PathEscape(e.vhost)+"/") {
			t.Errorf("QueueStats requested %s, not one queue", u)
		}
	}

	// Bytes, not time: the scoped refresh's answer follows the ladder.
	r0, b0 := m.Cost()
	if _, err := m.Stats(ctx, e.vhost); err != nil {
		t.Fatal(err)
	}
	r1, b1 := m.Cost()
	if _, err := m.LadderStats(ctx, sc.Covering(snap)); err != nil {
		t.Fatal(err)
	}
	r2, b2 := m.Cost()
	if scoped, whole := b2-b1, b1-b0; scoped*50 > whole {
		t.Errorf("scoped statistics read %d bytes, the whole vhost's %d", scoped, whole)
	}
	t.Logf("statistics: whole vhost %d requests %d bytes; scoped %d requests %d bytes", r1-r0, b1-b0, r2-r1, b2-b1)
	rec.take()

	// The observer that status, unstall and the console refresh through
	// reads the same way: its snapshot and its refreshes of ladder lad
	// fetch only lad's objects (its first snapshot, before it knows lad's
	// layout, those any ladder may own: lad2's too, never the others).
	obs := ops.NewObserver(ops.Scope{Vhost: e.vhost, Ladders: []string{"lad"}})
	for i := range 3 {
		var err error
		if obs, _, err = obs.Refresh(ctx, m, time.Now); err != nil {
			t.Fatal(err)
		}
		for _, u := range rec.take() {
			if strings.Contains(u.EscapedPath(), "/definitions") || strings.Contains(u.String(), "other-") ||
				u.EscapedPath() == "/api/queues/"+url.PathEscape(e.vhost) && u.Query().Get("use_regex") != "true" {
				t.Errorf("observer read %d requested %s, which is not filtered to the ladders", i, u)
			}
		}
		if got := queueNames(obs.Snapshot().Queues); i > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("observer read %d holds queues %v, want lad's %v", i, got, want)
		}
	}
	if rep := obs.Report(obs.At()); len(rep.Ladders) != 1 || rep.Ladders[0].Found.Ladder.Name != "lad" {
		t.Errorf("the observer reports %d ladders, want lad alone", len(rep.Ladders))
	}

	// More than a page: 2,000 queues come in four pages of 500.
	many, err := m.LadderStats(ctx, topology.Scope{Vhost: e.vhost, Patterns: []string{`other-0[01]\d{3}`}})
	if err != nil {
		t.Fatal(err)
	}
	if len(many) != 2000 || many[0].Name != "other-00000" || many[1999].Name != "other-01999" {
		t.Fatalf("paged statistics returned %d queues (%v…), want other-00000 to other-01999", len(many), queueNames(many[:min(3, len(many))]))
	}
	if n := len(rec.take()); n != 4 {
		t.Errorf("2,000 queues took %d requests, want 4 pages of 500", n)
	}
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

// 200 ladders across 100 vhosts are all found, in a few requests across
// vhosts rather than any per vhost.
func TestDiscoverTwoHundredLaddersInHundredVhosts(t *testing.T) {
	base := brokertest.Require(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "rungs-test-discover200-" + hex.EncodeToString(b) + "-"
	const vhosts = 100
	var names []string
	for i := 0; i < vhosts; i++ {
		names = append(names, fmt.Sprintf("%s%03d", prefix, i))
	}
	each := func(f func(v string) error) error {
		work := make(chan string)
		errs := make(chan error, vhosts)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for v := range work {
					errs <- f(v)
				}
			}()
		}
		for _, v := range names {
			work <- v
		}
		close(work)
		wg.Wait()
		close(errs)
		var all []error
		for err := range errs {
			all = append(all, err)
		}
		return errors.Join(all...)
	}
	t.Cleanup(func() {
		_ = each(func(v string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return base.Mgmt.DeleteVhost(ctx, v)
		})
	})
	err := each(func(v string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := base.Mgmt.CreateVhost(ctx, v); err != nil {
			return err
		}
		cfg := base.Config
		cfg.Vhost = v
		conn, err := broker.Dial(ctx, cfg)
		if err != nil {
			return err
		}
		defer conn.Close()
		for _, name := range []string{"a", "b"} {
			l, err := topology.Ladder{Name: name, Vhost: v, Layout: "direct", Unit: time.Second, Levels: 2, Radix: 2, QueueType: topology.Classic}.Normalize()
			if err != nil {
				return err
			}
			if _, err := conn.Apply(ctx, l.Plan()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	m, rec := record(t, base.Config)
	ctx := ctxFor(t, time.Minute)
	start := time.Now()
	d, err := m.DiscoverLadders(ctx, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	ours := 0
	for _, f := range d.Found {
		if strings.HasPrefix(f.Ladder.Vhost, prefix) {
			ours++
			if len(f.Drift) != 0 {
				t.Errorf("%s/%s drifts: %v", f.Ladder.Vhost, f.Ladder.Name, f.Drift)
			}
		}
	}
	if ours != 2*vhosts {
		t.Errorf("discovered %d of the %d ladders", ours, 2*vhosts)
	}
	urls := rec.take()
	for _, u := range urls {
		if p := u.EscapedPath(); p != "/api/vhosts" && p != "/api/queues" && p != "/api/exchanges" && p != "/api/bindings" {
			t.Errorf("discovery requested %s, which is not a listing across vhosts", u)
		}
	}
	// One vhost list, the ladder-named queues and exchanges (about 800
	// each here) in pages of 500, one bindings listing; other tests'
	// vhosts on the broker may add a page.
	if len(urls) > 8 {
		t.Errorf("discovery took %d requests, want at most 8", len(urls))
	}
	reqs, bytes := m.Cost()
	t.Logf("discovered %d ladders (%d of ours) in %d vhosts: %d requests, %d bytes, %s", len(d.Found), ours, vhosts, reqs, bytes, took.Round(time.Millisecond))
}
