// Package brokertest gives integration tests a real broker: Require checks
// that one answers and NewVhost gives each test a vhost of its own, removed
// when the test ends. Import it from _test.go files only.
//
// The broker is the one scripts/broker.sh starts, or any other named by
// RUNGS_URL and RUNGS_MGMT_URL. A missing broker fails the test loudly,
// because CI must not pass by skipping; only `go test -short` skips.
package brokertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// adminTimeout bounds one of the harness's own management requests, and
// adminPatience all its retries of one vhost operation.
const (
	adminTimeout  = 20 * time.Second
	adminPatience = 2 * time.Minute
)

// Defaults match scripts/broker.sh.
const (
	DefaultURL     = "amqp://guest:guest@127.0.0.1:5710/"
	DefaultMgmtURL = "http://127.0.0.1:15710"
)

// Env is a broker that answered.
type Env struct {
	// Config addresses the broker's default vhost; NewVhost returns copies
	// aimed at fresh vhosts.
	Config broker.Config
	// Mgmt is an administrative management client for the broker.
	Mgmt *broker.Management
}

var (
	probeOnce sync.Once
	probeEnv  Env
	probeErr  error
)

// Require returns the test broker, probing it once per test binary. Without
// a broker it fails the test, or skips it under -short.
func Require(t testing.TB) Env {
	t.Helper()
	probeOnce.Do(func() { probeEnv, probeErr = probe() })
	if probeErr != nil {
		if testing.Short() {
			t.Skipf("short mode: no test broker (%v)", probeErr)
		}
		t.Fatalf("no test broker: %v\n\tstart one with: bash scripts/broker.sh up\n\t(or point RUNGS_URL and RUNGS_MGMT_URL at a broker; go test -short skips these tests)", probeErr)
	}
	return probeEnv
}

func probe() (Env, error) {
	cfg := broker.Config{URL: envOr("RUNGS_URL", DefaultURL), MgmtURL: envOr("RUNGS_MGMT_URL", DefaultMgmtURL)}
	// The harness's own client waits longer than rungs' default: creating
	// and deleting vhosts is slow on a broker that a whole suite (or two)
	// keeps busy, and a slow answer is not the test's failure.
	admin := cfg
	admin.Timeout = adminTimeout
	mgmt, err := broker.NewManagement(admin)
	if err != nil {
		return Env{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := mgmt.Overview(ctx); err != nil {
		return Env{}, err
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		return Env{}, err
	}
	_ = conn.Close()
	return Env{Config: cfg, Mgmt: mgmt}, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// NewVhost creates a vhost named after the test (rungs-test-<name>-<random>),
// grants the test user full permissions and deletes it when the test ends.
// The returned Config addresses it; its Vhost field is the name.
func (e Env) NewVhost(t testing.TB) broker.Config {
	t.Helper()
	name := "rungs-test-" + slug(t.Name()) + "-" + randomHex(4)
	if err := retry(func(ctx context.Context) error { return e.Mgmt.CreateVhost(ctx, name) }); err != nil {
		t.Fatalf("create vhost %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := retry(func(ctx context.Context) error {
			err := e.Mgmt.DeleteVhost(ctx, name)
			if errors.Is(err, broker.ErrNotFound) {
				return nil // an earlier try went through after all
			}
			return err
		})
		if err != nil {
			// The test itself is over and judged; a vhost the broker was
			// too busy to delete is its leftover, not its failure.
			t.Logf("could not delete vhost %s (left behind): %v", name, err)
		}
	})
	cfg := e.Config
	cfg.Vhost = name
	return cfg
}

// retry runs a harness request until it succeeds, is refused for good
// (the broker said no: an HTTP error status) or adminPatience has passed,
// backing off between tries. Timeouts and dropped connections are tried
// again: they mean a busy broker.
func retry(op func(context.Context) error) error {
	deadline := time.Now().Add(adminPatience)
	wait := 250 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		err := op(ctx)
		cancel()
		var api *broker.APIError
		if err == nil || errors.As(err, &api) && api.Status < 500 || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Second)
	}
}

// NewVhost is Require(t).NewVhost(t).
func NewVhost(t testing.TB) broker.Config {
	t.Helper()
	return Require(t).NewVhost(t)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug keeps a test name readable in a vhost list and short enough for one.
func slug(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 48 {
		s = s[len(s)-48:]
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails; it crashes instead
	return hex.EncodeToString(b)
}
