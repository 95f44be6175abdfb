package e2e

// TLS: a node of the test's own with an AMQPS and an HTTPS management
// listener that require a client certificate (scripts/broker.sh's
// RUNGS_TLS_CERT_DIR), certificates from a self-signed CA made with
// openssl, and rungs driven over both with --ca-cert, --cert and --key.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// tlsFiles are PEM files under one directory.
type tlsFiles struct {
	dir                          string
	ca, clientCert, clientKey    string
	otherCA                      string // a CA that signed nothing of the broker's
	strangerCert, strangerKey    string // a client certificate the other CA signed
	serverCert, serverKey, caKey string
}

// makeCerts makes a CA, a server certificate for localhost and 127.0.0.1,
// a client certificate, and a second CA with a client certificate of its
// own, with openssl.
func makeCerts(t *testing.T) tlsFiles {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl is needed for the TLS test (scripts/test.sh installs it): %v", err)
	}
	dir := t.TempDir()
	f := func(name string) string { return filepath.Join(dir, name) }
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.Command("openssl", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(f(name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newCA := func(prefix, cn string) {
		sh("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN="+cn,
			"-keyout", prefix+"-key.pem", "-out", prefix+".pem")
	}
	sign := func(ca, name, cn, ext string) {
		write(name+".ext", ext)
		sh("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN="+cn, "-keyout", name+"-key.pem", "-out", name+".csr")
		sh("x509", "-req", "-in", name+".csr", "-CA", ca+".pem", "-CAkey", ca+"-key.pem", "-CAcreateserial",
			"-days", "2", "-extfile", name+".ext", "-out", name+".pem")
	}
	newCA("ca", "rungs test CA")
	sign("ca", "server", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
	sign("ca", "client", "rungs-client", "extendedKeyUsage=clientAuth\n")
	newCA("other-ca", "some other CA")
	sign("other-ca", "stranger", "stranger", "extendedKeyUsage=clientAuth\n")
	return tlsFiles{
		dir: dir, ca: f("ca.pem"), caKey: f("ca-key.pem"),
		serverCert: f("server.pem"), serverKey: f("server-key.pem"),
		clientCert: f("client.pem"), clientKey: f("client-key.pem"),
		otherCA: f("other-ca.pem"), strangerCert: f("stranger.pem"), strangerKey: f("stranger-key.pem"),
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	certs := makeCerts(t)
	n := startNode(t, "tls", 2, func(p []int) []string {
		return []string{
			"RUNGS_TLS_CERT_DIR=" + certs.dir,
			"RUNGS_AMQPS_PORT=" + strconv.Itoa(p[0]), "RUNGS_MGMT_TLS_PORT=" + strconv.Itoa(p[1]),
			"RUNGS_TLS_VERIFY=verify_peer", "RUNGS_TLS_FAIL_IF_NO_PEER_CERT=true",
		}
	})
	ports := n.extraPorts
	amqps := "amqps://guest:guest@localhost:" + strconv.Itoa(ports[0]) + "/"
	https := "https://localhost:" + strconv.Itoa(ports[1])
	// Plain listeners stay for the script's probes; the environment must
	// not point rungs at them.
	env := []string{"RUNGS_URL=" + amqps, "RUNGS_MGMT_URL=" + https, "RUNGS_VHOST=/"}
	mutual := []string{"--ca-cert", certs.ca, "--cert", certs.clientCert, "--key", certs.clientKey}
	with := func(flags []string, args ...string) []string { return append(args, flags...) }

	// Everything works over TLS with the CA and a client certificate.
	out := mustRungs(t, env, with(mutual, "apply", "--ladder", "tls", "--unit", "100ms", "--levels", "6", "--radix", "2")...)
	if !strings.Contains(out, "drift: none") {
		t.Fatalf("apply over TLS did not verify through the HTTPS management API:\n%s", out)
	}
	out = mustRungs(t, env, with(mutual, "publish", "--ladder", "tls", "--delay", "1s", "--count", "5", "--id-prefix", "tls-")...)
	if !strings.Contains(out, "5 confirmed") {
		t.Fatalf("publish over TLS:\n%s", out)
	}
	if out := mustRungs(t, env, with(mutual, "status", "--ladder", "tls")...); !strings.Contains(out, "tls.rung.03") {
		t.Fatalf("status over TLS:\n%s", out)
	}
	// trace's own flag is --routing-key, so the client key still reaches it.
	if out := mustRungs(t, env, with(mutual, "trace", "3s", "--ladder", "tls")...); !strings.Contains(out, "checked: the broker's bindings route it exactly this way") {
		t.Fatalf("trace over TLS:\n%s", out)
	}
	if out := mustRungs(t, env, with(mutual, "discover")...); !strings.Contains(out, "tls") {
		t.Fatalf("discover over TLS:\n%s", out)
	}
	cfg := broker.Config{URL: amqps, MgmtURL: https, CACert: certs.ca, ClientCert: certs.clientCert, ClientKey: certs.clientKey}
	got := newArrivals()
	consumeUntil(t, cfg, "tls.done", 30*time.Second, 10*time.Second,
		func(d broker.Delivery) { got.record(d, "tls-", 5, time.Time{}) },
		func() bool { return len(got.seen) == 5 })
	if len(got.seen) != 5 {
		t.Fatalf("%d of 5 messages arrived over TLS", len(got.seen))
	}

	// The console too.
	m := newTerm(t, 120, 30, env, rungsBinary(t)+" --ladder tls --refresh 1s "+strings.Join(mutual, " ")+"; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder over TLS", text("ladders › tls"), 30*time.Second)
	m.waitFor("a TLS connection", text("● connected"), 10*time.Second)
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)

	// What must fail, fails with one clear line and changes nothing.
	before := definitions(t, cfg)
	cases := map[string]struct {
		args []string
		want []string
	}{
		"wrong CA, management API": {
			with([]string{"--ca-cert", certs.otherCA, "--cert", certs.clientCert, "--key", certs.clientKey}, "status"),
			[]string{"https://localhost:" + strconv.Itoa(ports[1]), "certificate signed by unknown authority"},
		},
		"wrong CA, AMQP": {
			with([]string{"--ca-cert", certs.otherCA, "--cert", certs.clientCert, "--key", certs.clientKey}, "apply", "--ladder", "other"),
			[]string{"amqps://localhost:" + strconv.Itoa(ports[0]), "certificate signed by unknown authority"},
		},
		"no CA: the system roots do not know it": {
			[]string{"apply", "--ladder", "other", "--cert", certs.clientCert, "--key", certs.clientKey},
			[]string{"certificate signed by unknown authority"},
		},
		"no client certificate, AMQP": {
			[]string{"apply", "--ladder", "other", "--ca-cert", certs.ca},
			[]string{"amqps://localhost", "requires a client certificate closes TLS connections like this: give --cert and --key"},
		},
		"no client certificate, management API": {
			[]string{"status", "--ca-cert", certs.ca},
			[]string{"https://localhost", "requires a client certificate closes TLS connections like this: give --cert and --key"},
		},
		"client certificate of another CA": {
			with([]string{"--ca-cert", certs.ca, "--cert", certs.strangerCert, "--key", certs.strangerKey}, "apply", "--ladder", "other"),
			[]string{"amqps://localhost", "does not trust the client certificate closes TLS connections like this"},
		},
		"key of another certificate": {
			with([]string{"--ca-cert", certs.ca, "--cert", certs.clientCert, "--key", certs.strangerKey}, "status"),
			[]string{"load client certificate", "private key does not match public key"},
		},
		"certificate without a key": {
			[]string{"status", "--ca-cert", certs.ca, "--cert", certs.clientCert},
			[]string{"needs both a certificate and a key file"},
		},
		"a CA file that is not PEM": {
			[]string{"status", "--ca-cert", certs.dir + "/client.ext"},
			[]string{"no PEM certificate found"},
		},
		"plain AMQP against the TLS port": {
			with(mutual, "apply", "--ladder", "other", "--url", strings.Replace(amqps, "amqps://", "amqp://", 1)),
			[]string{"connect to amqp://localhost"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := rungs(t, env, append(tc.args, "--timeout", "5s")...)
			line := strings.TrimRight(r.errOut, "\n")
			if r.code == 0 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "rungs: ") {
				t.Fatalf("exit %d, want one error line:\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("the error does not say %q:\n%s", w, line)
				}
			}
			if strings.Contains(r.out+r.errOut, "guest:guest") {
				t.Errorf("a password was printed:\n%s%s", r.out, r.errOut)
			}
		})
	}
	if after := definitions(t, cfg); after != before {
		t.Errorf("the failed commands changed the broker:\nbefore: %s\nafter:  %s", before, after)
	}
}

// definitions is a vhost's exchanges, queues and bindings as one string,
// statistics left out, for before/after comparisons.
func definitions(t *testing.T, cfg broker.Config) string {
	t.Helper()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	snap, err := m.Snapshot(ctx, cfg.EffectiveVhost())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, x := range snap.Exchanges {
		b.WriteString("x " + x.Name + " " + x.Type + " " + x.Args.String() + ";")
	}
	for _, q := range snap.Queues {
		b.WriteString("q " + q.Name + " " + q.Args.String() + ";")
	}
	for _, bd := range snap.Bindings {
		b.WriteString("b " + bd.ID() + ";")
	}
	return b.String()
}
