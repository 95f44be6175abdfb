package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestRedactURL(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"password":          {"amqp://user:s3cret@host:5672/vh", "amqp://user:xxxxx@host:5672/vh"},
		"no password":       {"amqp://user@host/", "amqp://user@host/"},
		"no userinfo":       {"http://host:15672", "http://host:15672"},
		"encoded password":  {"amqps://u:p%40ss%2Fw@h/", "amqps://u:xxxxx@h/"},
		"unencoded slash":   {"amqp://user:pa/ss@host:5672/", "amqp://user:xxxxx@host:5672/"},
		"unencoded at":      {"amqp://user:p@ss@host/", "amqp://user:xxxxx@host/"},
		"unencoded hash":    {"amqp://user:pa#ss@host/", "amqp://user:xxxxx@host/"},
		"unencoded percent": {"amqp://user:100%real@host/", "amqp://user:xxxxx@host/"},
		"not a URL":         {"just text", "just text"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactFreeText(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"quoted":   {`Get "http://admin:hunter22@mq:15672/api": EOF`, `Get "http://admin:xxxxx@mq:15672/api": EOF`},
		"two urls": {"amqp://a:one1@x/ and https://b:two2@y/", "amqp://a:xxxxx@x/ and https://b:xxxxx@y/"},
		"plain":    {"connection refused", "connection refused"},
		"user@":    {"mailto user@host is not a URL password", "mailto user@host is not a URL password"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestMalformedURLKeepsPasswordOut covers url.Parse, whose errors quote the
// whole URL and sometimes a slice of the password ("invalid port").
func TestMalformedURLKeepsPasswordOut(t *testing.T) {
	const secret = "Sup3rS3cret"
	cases := map[string]Config{
		"slash in password":   {URL: "amqp://rungs:" + secret + "/x@broker:5672/"},
		"space":               {URL: "amqp://rungs:" + secret + "@broker 5672/"},
		"bad port":            {URL: "amqp://rungs:" + secret + "@broker:56x72/"},
		"control character":   {URL: "amqp://rungs:" + secret + "\x7f@broker/"},
		"bad scheme":          {URL: "http://rungs:" + secret + "@broker/"},
		"bad management URL":  {URL: "amqp://broker/", MgmtURL: "http://admin:" + secret + "/x@mgmt:15672"},
		"management scheme":   {URL: "amqp://broker/", MgmtURL: "ftp://admin:" + secret + "@mgmt"},
		"missing client key":  {URL: "amqps://rungs:" + secret + "@broker/", ClientCert: "/nonexistent.pem"},
		"unreadable CA":       {URL: "amqps://rungs:" + secret + "@broker/", CACert: "/nonexistent-ca.pem"},
		"heartbeat parameter": {URL: "amqp://rungs:" + secret + "@broker/?heartbeat=x"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			err := cfg.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error")
			}
			for _, s := range []string{err.Error(), cfg.String(), fmt.Sprintf("%v %+v", err, err)} {
				if strings.Contains(s, secret) || strings.Contains(s, secret[:6]) {
					t.Errorf("password leaked: %q", s)
				}
			}
			if _, err := NewManagement(cfg); err == nil || strings.Contains(err.Error(), secret[:6]) {
				t.Errorf("NewManagement error = %v", err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cases := map[string]struct {
		cfg                  Config
		vhost, mgmt, mu, mpw string
		tls                  bool
	}{
		"defaults":        {Config{}, "/", "http://localhost:15672", "guest", "guest", false},
		"vhost in path":   {Config{URL: "amqp://u:p@mq.example:5673/orders"}, "orders", "http://mq.example:15672", "u", "p", false},
		"encoded slash":   {Config{URL: "amqp://u:p@mq/%2F"}, "/", "http://mq:15672", "u", "p", false},
		"vhost overrides": {Config{URL: "amqp://u:p@mq/orders", Vhost: "billing"}, "billing", "http://mq:15672", "u", "p", false},
		"amqps":           {Config{URL: "amqps://u:p@mq/"}, "/", "https://mq:15671", "u", "p", true},
		"ipv6":            {Config{URL: "amqp://u:p@[::1]:5672/"}, "/", "http://[::1]:15672", "u", "p", false},
		"management creds": {
			Config{URL: "amqp://app:apppw@mq/", MgmtURL: "https://admin:adminpw@mgmt.example/rabbitmq/api/"},
			"/", "https://mgmt.example/rabbitmq", "admin", "adminpw", true,
		},
		"management without creds": {
			Config{URL: "amqp://app:apppw@mq/", MgmtURL: "http://mgmt:8080/"},
			"/", "http://mgmt:8080", "app", "apppw", false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := tc.cfg.resolve()
			if err != nil {
				t.Fatal(err)
			}
			if e.vhost != tc.vhost || e.mgmtURL != tc.mgmt || e.mgmtUser != tc.mu || e.mgmtPass != tc.mpw || (e.tls != nil) != tc.tls {
				t.Errorf("resolve() = vhost %q mgmt %q user %q pass %q tls %v", e.vhost, e.mgmtURL, e.mgmtUser, e.mgmtPass, e.tls != nil)
			}
			if got := tc.cfg.EffectiveVhost(); got != tc.vhost {
				t.Errorf("EffectiveVhost() = %q, want %q", got, tc.vhost)
			}
			if e.timeout != DefaultTimeout {
				t.Errorf("timeout = %s, want the default", e.timeout)
			}
		})
	}
}

func TestConfigString(t *testing.T) {
	// url.Parse takes the last @ as the end of the userinfo, so an
	// unencoded @ in a password parses, and must still not show.
	cfg := Config{URL: "amqp://app:T0pSecret@x@mq/orders", MgmtURL: "http://admin:Adm1nPw@mq:15672", ReadOnly: true, Timeout: time.Second}
	s := cfg.String()
	for _, secret := range []string{"T0pSecret", "Adm1nPw"} {
		if strings.Contains(s, secret) {
			t.Errorf("String() = %q leaks %s", s, secret)
		}
	}
	for _, want := range []string{"amqp://app:xxxxx@mq/orders", `"orders"`, "http://mq:15672", "read-only"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, want it to mention %s", s, want)
		}
	}
}

func TestRedactError(t *testing.T) {
	e, err := Config{URL: "amqp://app:pw-%C3%A9%2F1@mq/"}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	cause := fmt.Errorf("dial: %w", errors.Join(ErrReadOnly, errors.New("server said pw-é/1 and pw-%C3%A9%2F1")))
	got := e.redact(cause)
	if strings.Contains(got.Error(), "pw-") {
		t.Errorf("redact() = %q", got)
	}
	if !errors.Is(got, ErrReadOnly) {
		t.Errorf("redact() lost the sentinel: errors.Is(%v, ErrReadOnly) = false", got)
	}
	clean := errors.New("connection refused")
	if e.redact(clean) != clean {
		t.Errorf("an error without secrets should come back unchanged")
	}
}

func TestConflictParsing(t *testing.T) {
	cases := map[string]struct {
		server, arg string
		detail      []string
	}{
		"ttl": {
			"PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'c.rung.00' in vhost 'v': received the value '1000' of type 'long' but current is the value '999' of type 'long'",
			"x-message-ttl", []string{"x-message-ttl is 999, plan has 1000", "PRECONDITION_FAILED"},
		},
		"absent": {
			"PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-exchange' for queue 'q' in vhost '/': received the value 'dlx' of type 'longstr' but current is none",
			"x-dead-letter-exchange", []string{"is absent, plan has dlx"},
		},
		"exchange type": {
			"PRECONDITION_FAILED - inequivalent arg 'type' for exchange 'x' in vhost '/': received 'topic' but current is 'fanout'",
			"type", []string{"type is fanout, plan has topic"},
		},
		"unparsed": {"PRECONDITION_FAILED - something else", "", []string{"something else"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ce := conflictError("queue", "q", tc.server)
			if ce.Argument != tc.arg || ce.Server != tc.server {
				t.Errorf("conflictError() = %+v", ce)
			}
			for _, want := range tc.detail {
				if !strings.Contains(ce.Detail, want) {
					t.Errorf("Detail %q lacks %q", ce.Detail, want)
				}
			}
		})
	}
}

// A broker that refuses the client's certificate cuts the connection in
// whichever step the client is in; each of the ways Dial reports it gets
// the hint, and nothing else does.
func TestTLSHint(t *testing.T) {
	withCert := endpoint{tls: &tls.Config{Certificates: []tls.Certificate{{}}}}
	withoutCert := endpoint{tls: &tls.Config{}}
	for _, tc := range []struct {
		err  error
		hint bool
	}{
		{io.EOF, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{amqp.ErrClosed, true},
		{&amqp.Error{Code: amqp.ErrClosed.Code, Reason: amqp.ErrClosed.Reason}, true},
		{errors.New("remote error: tls: certificate required"), true},
		{&amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED"}, false},
		{errors.New("dial tcp: connection refused"), false},
	} {
		got := withCert.tlsHint(tc.err).Error()
		if strings.Contains(got, "does not trust the client certificate") != tc.hint {
			t.Errorf("%v: %q", tc.err, got)
		}
		if tc.hint && !strings.Contains(withoutCert.tlsHint(tc.err).Error(), "requires a client certificate") {
			t.Errorf("%v without a certificate: %q", tc.err, withoutCert.tlsHint(tc.err))
		}
	}
	if err := (endpoint{}).tlsHint(io.EOF); err != io.EOF {
		t.Errorf("plain AMQP: %v", err)
	}
}
