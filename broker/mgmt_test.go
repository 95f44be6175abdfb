package broker

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// fakePassword must never show up in an error.
const fakePassword = "Fake-Pa55word"

// fakeAPI serves testdata/mgmt fixtures (captured from RabbitMQ 3.10.8) and
// records the requests. It stands in for the broker only on paths a real
// one cannot be made to take on demand: refusals, failures and slowness.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	paths   []string
	handler func(w http.ResponseWriter, r *http.Request) bool // true: handled
	noAdmin bool
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.EscapedPath())
	f.mu.Unlock()
	if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != fakePassword {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"not_authorized","reason":"Login failed"}`))
		return
	}
	if f.handler != nil && f.handler(w, r) {
		return
	}
	fixture := map[string]string{
		"/api/definitions/v%2F1": "definitions.json",
		"/api/queues/v%2F1":      "queues.json",
		"/api/exchanges/v%2F1":   "exchanges.json",
		"/api/bindings/v%2F1":    "bindings.json",
		"/api/overview":          "overview.json",
		"/api/vhosts":            "vhosts.json",
	}[r.URL.EscapedPath()]
	if fixture == "" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		return
	}
	if fixture == "definitions.json" && f.noAdmin {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"Not administrator user"}`))
		return
	}
	if fixture == "queues.json" && r.URL.Query().Get("columns") != statsColumns {
		f.t.Errorf("queues requested with columns %q", r.URL.Query().Get("columns"))
	}
	body, err := os.ReadFile(filepath.Join("testdata", "mgmt", fixture))
	if err != nil {
		f.t.Fatal(err)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (f *fakeAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

// newFake starts a fake API and a client for it with a fixed clock.
func newFake(t *testing.T, f *fakeAPI, cfg Config) *Management {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.URL = "amqp://app:App-Pa55word@127.0.0.1:1/"
	cfg.MgmtURL = strings.Replace(srv.URL, "http://", "http://admin:"+fakePassword+"@", 1)
	m, err := NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return time.Unix(1700000090, 0) }
	return m
}

func wantSnapshot() topology.Snapshot {
	ae := topology.Args{"alternate-exchange": "demo.unroutable"}
	return topology.Snapshot{
		Vhost: "v/1",
		Exchanges: []topology.Exchange{
			{Name: "demo.ingest", Type: "topic", Durable: true, Args: ae},
			{Name: "demo.rung.00.expired", Type: "topic", Durable: true, Args: ae},
			{Name: "demo.unroutable", Type: "fanout", Durable: true},
		},
		Queues: []topology.Queue{
			{
				Name: "demo.rung.00", Durable: true,
				Args:  topology.Args{"x-message-ttl": int64(1000), "x-dead-letter-exchange": "demo.rung.00.expired"},
				Stats: topology.QueueStats{Type: "classic", State: "running"},
			},
			{
				Name: "demo.rung.27", Durable: true,
				Args: topology.Args{
					"x-message-ttl": int64(134217728000), "x-dead-letter-exchange": "demo.rung.00.expired",
					"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish",
				},
				// A stalled quorum rung: expired messages wait in messages_dlx.
				Stats: topology.QueueStats{Type: "quorum", State: "running", Expired: 512, ExpiredBytes: 2048},
			},
			{
				Name: "demo.unroutable", Durable: true,
				Stats: topology.QueueStats{
					Ready: 3, PublishRate: 2.4, DeliverRate: 0.6, Taken: 42, Type: "classic", State: "running", HeadAge: 90 * time.Second,
				},
			},
		},
		Bindings: []topology.Binding{
			{Source: "demo.ingest", Destination: "demo.rung.00", DestinationType: "queue", RoutingKey: "1.#"},
			{Source: "demo.unroutable", Destination: "demo.unroutable", DestinationType: "queue"},
		},
	}
}

func TestManagementSnapshot(t *testing.T) {
	f := &fakeAPI{}
	m := newFake(t, f, Config{})
	snap, err := m.Snapshot(context.Background(), "v/1")
	if err != nil {
		t.Fatal(err)
	}
	if want := wantSnapshot(); !reflect.DeepEqual(snap, want) {
		t.Errorf("Snapshot() =\n%+v\nwant\n%+v", snap, want)
	}
	reqs, bytes := m.Cost()
	if reqs != 2 || len(f.requests()) != 2 {
		t.Errorf("Snapshot made %d requests (%v), want 2", reqs, f.requests())
	}
	var size int64
	for _, name := range []string{"definitions.json", "queues.json"} {
		fi, err := os.Stat(filepath.Join("testdata", "mgmt", name))
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	if bytes != size {
		t.Errorf("Cost() bytes = %d, want %d", bytes, size)
	}
}

// A user without the administrator tag may not export definitions; the
// snapshot must come out the same from the exchanges and bindings lists,
// and the refused request must not be repeated on every refresh.
func TestManagementSnapshotWithoutAdministrator(t *testing.T) {
	f := &fakeAPI{noAdmin: true}
	m := newFake(t, f, Config{})
	for i := range 2 {
		snap, err := m.Snapshot(context.Background(), "v/1")
		if err != nil {
			t.Fatal(err)
		}
		if want := wantSnapshot(); !reflect.DeepEqual(snap, want) {
			t.Errorf("Snapshot() #%d =\n%+v\nwant\n%+v", i, snap, want)
		}
	}
	defs := 0
	for _, p := range f.requests() {
		if strings.HasPrefix(p, "/api/definitions/") {
			defs++
		}
	}
	if reqs, _ := m.Cost(); defs != 1 || reqs != 7 {
		t.Errorf("requests %v: want one definitions attempt and 7 in all", f.requests())
	}
}

func TestManagementStatsIsOneRequest(t *testing.T) {
	f := &fakeAPI{}
	m := newFake(t, f, Config{})
	qs, err := m.Stats(context.Background(), "v/1")
	if err != nil {
		t.Fatal(err)
	}
	if want := wantSnapshot().Queues; !reflect.DeepEqual(qs, want) {
		t.Errorf("Stats() = %+v, want %+v", qs, want)
	}
	if got := f.requests(); len(got) != 1 {
		t.Errorf("requests = %v, want one", got)
	}
}

func TestManagementOverviewAndVhosts(t *testing.T) {
	m := newFake(t, &fakeAPI{}, Config{})
	o, err := m.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Overview{RabbitMQVersion: "3.10.8", ErlangVersion: "25.2.3", ClusterName: "rabbit@vm", Node: "rabbit@localhost", StatsInterval: 5 * time.Second}
	if o != want {
		t.Errorf("Overview() = %+v, want %+v", o, want)
	}
	vs, err := m.Vhosts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/", "billing", "orders"}; !reflect.DeepEqual(vs, want) {
		t.Errorf("Vhosts() = %q, want %q", vs, want)
	}
}

func TestManagementErrors(t *testing.T) {
	cases := map[string]struct {
		handler func(w http.ResponseWriter, r *http.Request) bool
		call    func(m *Management) error
		is      error
		want    []string
	}{
		"wrong password": {
			handler: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":"not_authorized","reason":"Login failed"}`))
				return true
			},
			call: func(m *Management) error { _, err := m.Overview(context.Background()); return err },
			is:   ErrUnauthorized,
			want: []string{"401", "Login failed", "/api/overview"},
		},
		"wrong password via rabbit-hole": {
			handler: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusUnauthorized)
				return true
			},
			call: func(m *Management) error { return m.CreateVhost(context.Background(), "x") },
			is:   ErrUnauthorized,
			want: []string{"401", "PUT /api/vhosts/x"},
		},
		"server error page": {
			handler: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("<html><body><h1>500 Internal\n Server Error</h1></body></html>"))
				return true
			},
			call: func(m *Management) error { _, err := m.Stats(context.Background(), "v/1"); return err },
			want: []string{"500 Internal Server Error", "/api/queues/v%2F1", "<h1>500 Internal Server Error</h1>"},
		},
		"server error via rabbit-hole": {
			handler: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error":"internal_error","reason":"boom"}`))
				return true
			},
			call: func(m *Management) error { return m.DeleteVhost(context.Background(), "x") },
			want: []string{"500", "internal_error: boom", "DELETE /api/vhosts/x"},
		},
		"garbage JSON": {
			handler: func(w http.ResponseWriter, r *http.Request) bool {
				_, _ = w.Write([]byte(`[{"name": "q", "messages_ready": "lots"`))
				return true
			},
			call: func(m *Management) error { _, err := m.Snapshot(context.Background(), "v/1"); return err },
			want: []string{"decoding the response", `snapshot of vhost "v/1"`},
		},
		"unknown vhost": {
			call: func(m *Management) error { _, err := m.Stats(context.Background(), "nope"); return err },
			is:   ErrNotFound,
			want: []string{"404", "/api/queues/nope"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := newFake(t, &fakeAPI{handler: tc.handler}, Config{})
			err := tc.call(m)
			if err == nil {
				t.Fatal("want an error")
			}
			checkNoSecret(t, err)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// slowAPI answers nothing until the client gives up (or 3 s pass, so that
// the server can shut down).
func slowAPI(w http.ResponseWriter, r *http.Request) bool {
	// net/http notices a client hanging up only once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(3 * time.Second):
	}
	return true
}

func TestManagementHonoursContext(t *testing.T) {
	calls := map[string]func(ctx context.Context, m *Management) error{
		"stats (own request)":        func(ctx context.Context, m *Management) error { _, err := m.Stats(ctx, "v/1"); return err },
		"snapshot (two requests)":    func(ctx context.Context, m *Management) error { _, err := m.Snapshot(ctx, "v/1"); return err },
		"create vhost (rabbit-hole)": func(ctx context.Context, m *Management) error { return m.CreateVhost(ctx, "x") },
		"close connections":          func(ctx context.Context, m *Management) error { _, err := m.CloseConnections(ctx, "x"); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newFake(t, &fakeAPI{handler: slowAPI}, Config{Timeout: time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := call(ctx, m)
			if took := time.Since(start); took > time.Second {
				t.Errorf("returned after %s, want about 100ms", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error = %v, want context.DeadlineExceeded", err)
			}
			if err != nil {
				checkNoSecret(t, err)
			}
		})
	}
}

func TestManagementTimeout(t *testing.T) {
	m := newFake(t, &fakeAPI{handler: slowAPI}, Config{Timeout: 150 * time.Millisecond})
	start := time.Now()
	_, err := m.Overview(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("returned after %s, want about 150ms", took)
	}
	if err == nil || !strings.Contains(err.Error(), "no answer within 150ms") {
		t.Errorf("error = %v, want the client timeout", err)
	}
	if err != nil {
		checkNoSecret(t, err)
	}
}

func TestManagementReadOnly(t *testing.T) {
	f := &fakeAPI{}
	m := newFake(t, f, Config{ReadOnly: true})
	ctx := context.Background()
	_, closeErr := m.CloseConnections(ctx, "v")
	for name, err := range map[string]error{
		"CreateVhost": m.CreateVhost(ctx, "v"), "DeleteVhost": m.DeleteVhost(ctx, "v"), "CloseConnections": closeErr,
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s = %v, want ErrReadOnly", name, err)
		}
	}
	if got := f.requests(); len(got) != 0 {
		t.Errorf("read-only client sent %v", got)
	}
}

func TestManagementUnreachable(t *testing.T) {
	// Port 1 on loopback refuses connections.
	m, err := NewManagement(Config{MgmtURL: "http://app:" + fakePassword + "@127.0.0.1:1", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Overview(context.Background())
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error = %v, want connection refused at http://127.0.0.1:1", err)
	}
	if err != nil {
		checkNoSecret(t, err)
	}
}

func checkNoSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{fakePassword, "App-Pa55word"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error leaks a password: %q", err)
		}
	}
}
