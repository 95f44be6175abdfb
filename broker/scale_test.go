//go:build scale

// The scale tests make a broker hold what production brokers hold beside
// a ladder: 10,000 other queues in its vhost, 100 vhosts of ladders. They
// load the broker enough to slow every other test's management requests,
// so scripts/test.sh runs them on their own after each version's suite
// (go test -tags scale), as it runs the cluster suite.

package broker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

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
	brokertest.DeclareOthers(t, e.cfg, "other-", 10000)
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
	r0, b0 := m.Cost()
	snap, err := m.LadderSnapshot(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	// Bytes, not time: the snapshot's answers follow the ladder. The
	// whole vhost's were megabytes.
	if r1, b1 := m.Cost(); b1-b0 > 200<<10 {
		t.Errorf("the ladder's snapshot read %d bytes in %d requests, want the ladder's objects only", b1-b0, r1-r0)
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
		byName := strings.HasPrefix(p, "/api/queues/"+url.PathEscape(e.vhost)+"/")
		if strings.Contains(p, "/definitions") || !scoped && !bySource && !byName || strings.Contains(p, "other-") {
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
	r0, b0 = m.Cost()
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
