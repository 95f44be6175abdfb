package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// recorder is a recording proxy in front of the real management API: it
// keeps every URL the console requested and the bytes it was answered.
type recorder struct {
	mu    sync.Mutex
	urls  []*url.URL
	bytes int64
}

// take returns the URLs and bytes since the last take.
func (r *recorder) take() ([]*url.URL, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	urls, n := r.urls, r.bytes
	r.urls, r.bytes = nil, 0
	return urls, n
}

type countingBody struct {
	http.ResponseWriter
	r *recorder
}

func (w countingBody) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	w.r.bytes += int64(len(p))
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// recordMgmt points cfg's management API at a recording proxy.
func recordMgmt(t *testing.T, cfg broker.Config) (broker.Config, *recorder) {
	t.Helper()
	target, err := url.Parse(cfg.MgmtURL)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u := *req.URL
		rec.mu.Lock()
		rec.urls = append(rec.urls, &u)
		rec.mu.Unlock()
		// Bytes as the client reads them, not as gzip packs them.
		req.Header.Del("Accept-Encoding")
		proxy.ServeHTTP(countingBody{w, rec}, req)
	}))
	t.Cleanup(srv.Close)
	via, _ := url.Parse(srv.URL)
	via.User, via.Path = target.User, target.Path
	cfg.MgmtURL = via.String()
	// Listing 2,000 queues is slow on a busy machine; slowness is not what
	// this test judges.
	cfg.Timeout = time.Minute
	return cfg, rec
}

// answerReads answers the console's requests in flight against the real
// broker until none is left, as the program would.
func answerReads(t *testing.T, a App) App {
	t.Helper()
	for i := 0; i < 4 && a.loop.pending != nil; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r := a.loop.pending.read.Do(ctx, a.insp, a.now)
		cancel()
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Read.Op(), r.Err)
		}
		a = update(t, a, readMsg{seq: a.loop.pending.seq, r: r})
	}
	if a.loop.pending != nil {
		t.Fatal("the console keeps asking")
	}
	return a
}

// replies runs cmd's commands (a batch's in parallel) and feeds back what
// they answered of type M; other answers (cursor blinks) are dropped.
func replies[M tea.Msg](t *testing.T, a App, cmd tea.Cmd) App {
	t.Helper()
	var (
		mu  sync.Mutex
		got []tea.Msg
		wg  sync.WaitGroup
	)
	var launch func(tea.Cmd)
	launch = func(c tea.Cmd) {
		if c == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					launch(c)
				}
				return
			}
			if _, ok := msg.(M); ok {
				mu.Lock()
				got = append(got, msg)
				mu.Unlock()
			}
		}()
	}
	launch(cmd)
	wg.Wait()
	for _, msg := range got {
		a = update(t, a, msg)
	}
	return a
}

// typeLast types text and runs the commands of its last key press, which
// answer for the whole text.
func typeLast[M tea.Msg](t *testing.T, a App, text string) App {
	t.Helper()
	a = typeText(t, a, text[:len(text)-1])
	last := text[len(text)-1:]
	m, cmd := a.Update(tea.KeyPressMsg{Code: rune(last[0]), Text: last})
	return replies[M](t, m.(App), cmd)
}

// The console reads what it shows, beside 2,000 other queues (10,000 in
// TestConsoleBesideTenThousandQueues, under -tags scale): the list's
// refreshes read the objects any ladder may own, filtered on the broker;
// a refresh with a ladder open reads that ladder's queues by name and
// nothing else. The replay form still checks its destination: a queue
// outside the ladder, read by name, is accepted; a missing one is refused.
func TestConsoleReadsWhatItShows(t *testing.T) { consoleReadsWhatItShows(t, 2000) }

// consoleReadsWhatItShows is the test beside others other queues.
func consoleReadsWhatItShows(t *testing.T, others int) {
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx := context.Background()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := brokertest.RawChannel(t, cfg).QueueDeclare("orders", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	var lad, lad2 topology.Ladder
	for _, l := range []topology.Ladder{
		{Name: "lad", Layout: "direct", Unit: time.Second, Levels: 3, Radix: 2, QueueType: topology.Classic, Targets: []string{"orders"}},
		{Name: "lad2", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 2, QueueType: topology.Classic},
	} {
		l.Vhost = cfg.Vhost
		l, err := l.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Apply(ctx, l.Plan()); err != nil {
			t.Fatal(err)
		}
		if l.Name == "lad" {
			lad = l
		} else {
			lad2 = l
		}
	}
	brokertest.DeclareOthers(t, cfg, "other-", others)

	pcfg, rec := recordMgmt(t, cfg)
	m, err := broker.NewManagement(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := m.Stats(ctx, cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	_, wholeBytes := rec.take()

	a := New(Options{Backends: Backends{Inspector: m, Publisher: conn, Purger: conn, Peeker: conn, Mover: conn, Limits: m,
		Vhost: cfg.Vhost, BrokerLabel: "test"}, Refresh: time.Minute})
	a = update(t, a, tea.WindowSizeMsg{Width: 120, Height: 40})
	unfiltered := func(when string, urls []*url.URL) {
		t.Helper()
		for _, u := range urls {
			p := u.EscapedPath()
			if strings.Contains(p, "/definitions") || strings.Contains(u.String(), "other-") ||
				strings.HasPrefix(p, "/api/queues/") && strings.Count(p, "/") == 3 && u.Query().Get("use_regex") != "true" ||
				strings.HasSuffix(p, "/bindings") {
				t.Errorf("%s requested %s, which is not filtered to the ladders", when, u)
			}
		}
	}

	// The list: both ladders found, nothing else read.
	a = answerReads(t, a)
	if got := ops.Ladders(a.found); len(got) != 2 {
		t.Fatalf("the list found %d ladders, want lad and lad2", len(got))
	}
	if _, ok := a.merged().Queue("orders"); !ok {
		t.Error("the list's snapshot lacks lad's target, which publishing checks its route into")
	}
	urls, _ := rec.take()
	unfiltered("the list's first reads", urls)
	a = answerReads(t, update(t, a, pollMsg{gen: a.loop.gen}))
	urls, listBytes := rec.take()
	unfiltered("a refresh of the list", urls)

	// A ladder open: its snapshot, then refreshes of its queues by name.
	a = update(t, a, press(":"))
	a = typeText(t, a, "ladder lad")
	a = answerReads(t, update(t, a, press("enter")))
	if a.screen != screenLadder || a.ladder.Found().Ladder.Name != "lad" {
		t.Fatalf("screen %v, ladder %q: want lad open", a.screen, a.ladder.Found().Ladder.Name)
	}
	urls, _ = rec.take()
	unfiltered("opening lad", urls)
	var own []string
	for _, q := range lad.Plan().Queues {
		own = append(own, q.Name)
	}
	own = append(own, "orders")
	for _, q := range a.loop.obs.Snapshot().Queues {
		if !slices.Contains(own, q.Name) {
			t.Errorf("with lad open, the console holds queue %s, not lad's", q.Name)
		}
	}
	a = answerReads(t, update(t, a, pollMsg{gen: a.loop.gen}))
	urls, ladBytes := rec.take()
	if len(urls) == 0 {
		t.Fatal("a refresh with lad open requested nothing")
	}
	prefix := "/api/queues/" + url.PathEscape(cfg.Vhost) + "/"
	for _, u := range urls {
		name, err := url.PathUnescape(strings.TrimPrefix(u.EscapedPath(), prefix))
		if !strings.HasPrefix(u.EscapedPath(), prefix) || err != nil || !slices.Contains(own, name) {
			t.Errorf("a refresh with lad open requested %s, not one of lad's queues", u)
		}
	}
	t.Logf("beside %d queues: the whole vhost's statistics %d bytes; a refresh of the list %d bytes; of lad, open, %d bytes in %d requests",
		len(whole), wholeBytes, listBytes, ladBytes, len(urls))
	if ladBytes*20 > wholeBytes {
		t.Errorf("a refresh of lad read %d bytes, the vhost's statistics are %d", ladBytes, wholeBytes)
	}

	// The replay form, from lad's done queue to a queue outside the
	// ladder: looked up by name, missing refused, existing accepted.
	var done string
	for _, q := range own {
		if role, _, _ := lad.QueueRole(q); role == topology.RoleDone {
			done = q
		}
	}
	a = update(t, a, press(":"))
	a = typeText(t, a, "replay "+done)
	a = update(t, a, press("enter"))
	if !isOpen[replayDialog](a) {
		t.Fatalf("the replay form did not open: %+v", a.result)
	}
	a = keys(t, a, "right", "right", "tab") // where to: a queue; then its name
	a = typeLast[destLookedUpMsg](t, a, "nope-queue")
	d := dialogOf[replayDialog](t, a)
	var nq *ops.NoQueueError
	if !errors.As(d.planErr, &nq) || nq.Queue != "nope-queue" {
		t.Fatalf("a missing destination plans as %v, want no queue nope-queue", d.planErr)
	}
	if v := plainView(t, keys(t, a, "enter")); !strings.Contains(v, `no queue "nope-queue" in vhost`) {
		t.Errorf("the form does not say the destination is missing:\n%s", v)
	}
	a = keys(t, a, "ctrl+u")
	a = typeLast[destLookedUpMsg](t, a, "other-01234")
	d = dialogOf[replayDialog](t, a)
	if d.planErr != nil || d.plan.Describe != "to queue other-01234" {
		t.Fatalf("an existing queue outside the ladder plans as %q, %v", d.plan.Describe, d.planErr)
	}
	a = keys(t, a, "enter")
	if d = dialogOf[replayDialog](t, a); d.form {
		t.Fatalf("the form did not go on to its confirmation: %s", d.err)
	}
	urls, _ = rec.take()
	for _, u := range urls {
		if p := u.EscapedPath(); p != prefix+"nope-queue" && p != prefix+"other-01234" {
			t.Errorf("the replay form requested %s, not its destination by name", u)
		}
	}
	a = keys(t, a, "esc", "esc")

	// Purging another ladder than the one open: its queues read by name,
	// the confirmation counting every one.
	a = update(t, a, press(":"))
	a = typeText(t, a, "purge lad2")
	m1, cmd := a.Update(press("enter"))
	a = replies[queueLookedUpMsg](t, m1.(App), cmd)
	if c := dialogOf[purgeConfirm](t, a); len(c.plan.Queues) != len(lad2.Rungs())+len(lad2.Terminals()) {
		t.Errorf("purging lad2 with lad open plans %d queues, want its %d", len(c.plan.Queues), len(lad2.Rungs())+len(lad2.Terminals()))
	}
	a = keys(t, a, "esc")

	// Peeking a queue the vhost does not have: read by name, one line.
	a = update(t, a, press(":"))
	a = typeText(t, a, "peek nope-queue")
	m2, cmd := a.Update(press("enter"))
	a = replies[queueLookedUpMsg](t, m2.(App), cmd)
	if !strings.Contains(a.result.Text, `no queue "nope-queue" in vhost`) {
		t.Errorf(":peek nope-queue: %+v", a.result)
	}
}
