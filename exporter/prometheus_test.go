package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// needTool finds a binary CI must have (scripts/test.sh installs it); only
// -short skips without it.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if testing.Short() {
			t.Skipf("short mode: no %s", name)
		}
		t.Fatalf("%s is not installed (apt-get install prometheus; scripts/test.sh does)", name)
	}
	return p
}

// TestRealPrometheusScrapesExporter applies a ladder on the test broker,
// parks messages in a rung, serves the exporter, starts a real Prometheus
// scraping it and asks Prometheus' HTTP API for the rung's depth.
func TestRealPrometheusScrapesExporter(t *testing.T) {
	promBin := needTool(t, "prometheus")
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	l, err := topology.Ladder{Name: "prom", Vhost: cfg.Vhost, Unit: time.Second, Levels: 8, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
	// 200s is 11001000 in binary: the messages wait 128s in level 7 first.
	tr, err := l.Trace(200*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := 0; i < 3; i++ {
		msgs = append(msgs, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: []byte("x"), Timestamp: time.Now()})
	}
	if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
		t.Fatalf("publish: %+v %v", res, err)
	}
	rung := tr.Hops[0].Queue

	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, New(m, Options{Vhosts: []string{cfg.Vhost}})) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	dir := t.TempDir()
	promAddr := freeAddr(t)
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: rungs\n    static_configs:\n      - targets: ['%s']\n", ln.Addr())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	var promLog strings.Builder
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
	}()

	// Wait (a deadline for waiting, not a measurement) until Prometheus has
	// scraped the exporter and the broker's statistics show the messages.
	query := fmt.Sprintf(`rungs_rung_messages_ready{vhost=%q,ladder="prom",queue=%q}`, cfg.Vhost, rung)
	if err := (testutil.Poll{Within: 90 * time.Second, Every: time.Second}).Until(t, func() error {
		v, raw, err := promQuery(promAddr, query)
		if err != nil {
			return err
		}
		if v != "3" {
			return fmt.Errorf("answer %s", raw)
		}
		return nil
	}); err != nil {
		t.Fatalf("Prometheus never reported %s = 3; last: %v\nprometheus log:\n%s", query, err, tail(promLog.String(), 2000))
	}
	up, _, _ := promQuery(promAddr, `up{job="rungs"}`)
	if up != "1" {
		t.Errorf("Prometheus' up for the exporter is %q", up)
	}
	// The messages wait 128s in their first rung and entered it
	// just now: none can arrive within a minute, all within an hour.
	sel := fmt.Sprintf(`vhost=%q,ladder="prom"`, cfg.Vhost)
	for q, want := range map[string]string{
		`rungs_ladder_forecast_due_messages{` + sel + `,within="1h",bound="min"}`: "3",
		`rungs_rung_stalled{` + sel + `,queue="` + rung + `"}`:                    "0",
		`rungs_ladder_messages_in_flight{` + sel + `}`:                            "3",
		`rungs_rung_backlogged{` + sel + `,queue="` + rung + `"}`:                 "0",
		`rungs_ladder_backlog_drain_seconds{` + sel + `}`:                         "0",
	} {
		if v, raw, err := promQuery(promAddr, q); v != want {
			t.Errorf("%s = %q, want %s (%s %v)", q, v, want, raw, err)
		}
	}
}

// promQuery runs an instant query and returns the first sample's value.
func promQuery(addr, q string) (string, string, error) {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		return "", "", err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", string(raw), err
	}
	if r.Status != "success" || len(r.Data.Result) == 0 || len(r.Data.Result[0].Value) != 2 {
		return "", string(raw), nil
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	return v, string(raw), nil
}

// freeAddr finds a loopback port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
