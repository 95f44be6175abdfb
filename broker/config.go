package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Defaults for a Config left partly empty.
const (
	// DefaultURL is the broker a Config without URL talks to: RabbitMQ's
	// out-of-the-box guest account, which only works from loopback.
	DefaultURL = "amqp://guest:guest@localhost:5672/"
	// DefaultTimeout bounds one management request or one AMQP dial.
	DefaultTimeout = 5 * time.Second
	// redactedPassword stands in for every password rungs prints.
	redactedPassword = "xxxxx"
)

// Config says where a broker is and how to talk to it. The zero value talks
// to DefaultURL.
type Config struct {
	// URL is the AMQP URL, amqp:// or amqps://, with credentials. Its path
	// is the vhost unless Vhost is set.
	URL string
	// MgmtURL is the management API's base URL (http:// or https://).
	// Empty derives it from URL: the same host, port 15672 (https and
	// 15671 for amqps). Credentials in it are used for the management API
	// only; without them the AMQP URL's are used.
	MgmtURL string
	// Vhost overrides the vhost in URL's path.
	Vhost string
	// CACert, ClientCert and ClientKey are PEM file paths for amqps and
	// https: a CA to trust instead of the system roots, and a client
	// certificate for mutual TLS.
	CACert, ClientCert, ClientKey string
	// ReadOnly makes every operation that would change the broker fail with
	// ErrReadOnly before anything is sent.
	ReadOnly bool
	// Timeout bounds one management request and one AMQP dial; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// endpoint is a Config worked out: everything the clients need, parsed once.
type endpoint struct {
	amqpURL    string // the URL as given, for dialling; never printed
	amqpURI    amqp.URI
	vhost      string
	mgmtURL    string // base URL without credentials or trailing /api
	mgmtUser   string
	mgmtPass   string
	timeout    time.Duration
	tls        *tls.Config // nil when neither side uses TLS
	readOnly   bool
	secrets    []string // passwords to scrub from every message
	displayURL string   // the AMQP URL with its password redacted
}

// resolve parses and checks the configuration. Its errors never contain a
// password.
func (c Config) resolve() (endpoint, error) {
	raw := c.URL
	if raw == "" {
		raw = DefaultURL
	}
	e := endpoint{amqpURL: raw, timeout: c.Timeout, readOnly: c.ReadOnly, displayURL: RedactURL(raw)}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	u, err := parseURL("AMQP", raw)
	if err != nil {
		return e, err
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		e.secrets = append(e.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
	}
	if u.Scheme != "amqp" && u.Scheme != "amqps" {
		return e, fmt.Errorf("AMQP URL %s: scheme must be amqp or amqps", e.displayURL)
	}
	// u parsed, so ParseURI's own url.Parse cannot fail and echo the URL;
	// its remaining errors (port, query parameters) name no credentials.
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return e, fmt.Errorf("AMQP URL %s: %s", e.displayURL, scrub(err.Error(), e.secrets))
	}
	e.amqpURI = uri
	e.vhost = uri.Vhost
	if c.Vhost != "" {
		e.vhost = c.Vhost
	}

	mgmt := c.MgmtURL
	if mgmt == "" {
		scheme, port := "http", "15672"
		if uri.Scheme == "amqps" {
			scheme, port = "https", "15671"
		}
		mgmt = scheme + "://" + net.JoinHostPort(uri.Host, port)
	}
	mu, err := parseURL("management", mgmt)
	if err != nil {
		return e, err
	}
	if mu.Scheme != "http" && mu.Scheme != "https" {
		return e, fmt.Errorf("management URL %s: scheme must be http or https", RedactURL(mgmt))
	}
	e.mgmtUser, e.mgmtPass = uri.Username, uri.Password
	if mu.User != nil {
		e.mgmtUser = mu.User.Username()
		e.mgmtPass, _ = mu.User.Password()
		if e.mgmtPass != "" {
			e.secrets = append(e.secrets, e.mgmtPass, url.QueryEscape(e.mgmtPass), url.PathEscape(e.mgmtPass))
		}
	}
	mu.User = nil
	mu.RawQuery, mu.Fragment = "", ""
	// A path prefix (management.path_prefix) is kept; "/api" is where
	// requests go, so a URL that already names it is trimmed back.
	mu.Path = strings.TrimSuffix(strings.TrimSuffix(mu.Path, "/"), "/api")
	mu.RawPath = ""
	e.mgmtURL = strings.TrimSuffix(mu.String(), "/")

	if uri.Scheme == "amqps" || mu.Scheme == "https" || c.CACert != "" || c.ClientCert != "" || c.ClientKey != "" {
		e.tls, err = c.tlsConfig()
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

// tlsConfig builds the TLS settings both clients share. ServerName is left
// to each client, which knows which host it dials.
func (c Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, fmt.Errorf("read CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA certificate %s: no PEM certificate found", c.CACert)
		}
		tc.RootCAs = pool
	}
	switch {
	case c.ClientCert != "" && c.ClientKey != "":
		cert, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case c.ClientCert != "" || c.ClientKey != "":
		return nil, errors.New("a client certificate needs both a certificate and a key file")
	}
	return tc, nil
}

// parseURL parses a URL without letting url.Parse's error, which quotes the
// whole input, carry a password along.
func parseURL(what, raw string) (*url.URL, error) {
	if strings.ContainsAny(raw, " \t\r\n") {
		return nil, fmt.Errorf("%s URL %s contains whitespace", what, RedactURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && !hasUserinfo(raw) {
			// Without userinfo there is nothing to leak, and the reason helps.
			return nil, fmt.Errorf("%s URL %s: %v", what, RedactURL(raw), ue.Err)
		}
		// The reason (e.g. `invalid port ":pa" after host`) can quote part of
		// a password, so it is replaced by the usual cause.
		return nil, fmt.Errorf("%s URL %s cannot be parsed; percent-encode any of : / ? # @ in the user name or password", what, RedactURL(raw))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s URL %s has no host", what, RedactURL(raw))
	}
	return u, nil
}

// hasUserinfo reports whether an authority with an @ follows the scheme.
func hasUserinfo(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	return ok && strings.Contains(rest, "@")
}

// RedactURL replaces the password of a URL with xxxxx. It also copes with
// URLs url.Parse rejects (an unencoded / or @ in the password), treating
// everything up to the last @ as userinfo, so that nothing of the password
// survives.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return u.Redacted()
		}
		return raw
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPw := strings.Cut(rest[:at], ":")
	if !hasPw {
		return raw
	}
	return scheme + "://" + user + ":" + redactedPassword + rest[at:]
}

// userinfoRE finds scheme://user:password@ in free text. The password runs
// to the last @ before whitespace or a quote, as url.Parse reads it.
var userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@"'` + "`" + `]*):([^\s"'` + "`" + `]*)@`)

// Redact replaces the passwords of every URL in s with xxxxx, for error
// texts that may quote a URL.
func Redact(s string) string {
	return userinfoRE.ReplaceAllString(s, "${1}:"+redactedPassword+"@")
}

// Redact scrubs the passwords this configuration knows (from URL and
// MgmtURL, raw and percent-encoded) and any URL userinfo from s.
func (c Config) Redact(s string) string {
	e, _ := c.resolve()
	return scrub(s, e.secrets)
}

// scrub applies Redact and then removes each known secret verbatim.
func scrub(s string, secrets []string) string {
	s = Redact(s)
	for _, sec := range secrets {
		// Very short secrets would shred ordinary words; Redact above has
		// already removed them from any URL.
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, redactedPassword)
		}
	}
	return s
}

// String describes the configuration without secrets, for logs and
// headers.
func (c Config) String() string {
	e, err := c.resolve()
	if err != nil {
		return scrub(err.Error(), e.secrets)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s vhost %s, management %s", e.displayURL, strconv.Quote(e.vhost), e.mgmtURL)
	if e.readOnly {
		b.WriteString(", read-only")
	}
	return b.String()
}

// Validate reports whether the configuration can be used, without
// contacting the broker.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// EffectiveVhost is the vhost the configuration addresses: Vhost if set,
// else the URL's path, else "/". For a URL that does not parse it is Vhost
// or "/"; Validate, Dial and NewManagement report the URL's error.
func (c Config) EffectiveVhost() string {
	if e, err := c.resolve(); err == nil {
		return e.vhost
	}
	if c.Vhost != "" {
		return c.Vhost
	}
	return "/"
}

// ManagementURL is the management API base URL the configuration uses,
// derived if MgmtURL is empty, without credentials.
func (c Config) ManagementURL() (string, error) {
	e, err := c.resolve()
	return e.mgmtURL, err
}

// redactedError carries a scrubbed message. It does not unwrap, so that
// errors.As cannot dig the unscrubbed cause out; errors.Is still sees
// sentinels (context.DeadlineExceeded, ErrUnauthorized...) through Is.
type redactedError struct {
	msg   string
	cause error
}

// Error is the scrubbed message.
func (e *redactedError) Error() string { return e.msg }

// Is matches what the cause matches, without exposing the cause.
func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }

// redact makes err safe to show: nil stays nil, and an error whose text
// holds no secret is returned unchanged.
func (e endpoint) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := scrub(msg, e.secrets)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, cause: err}
}

// closedDuringOpen reports amqp091's "channel/connection is not open",
// which Dial returns when the socket closes during the AMQP handshake.
func closedDuringOpen(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.ErrClosed.Code && ae.Reason == amqp.ErrClosed.Reason
}

// tlsHint explains a TLS connection the broker cut short. Under TLS 1.3 a
// client learns that the broker refused its certificate (or the lack of
// one) only after the handshake, as a reset, an EOF or an alert, or, when
// the cut lands while the AMQP handshake is under way, as amqp091's
// "channel/connection is not open" (seen on 3.10.8 in CI).
func (e endpoint) tlsHint(err error) error {
	if e.tls == nil || err == nil {
		return err
	}
	cut := errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || closedDuringOpen(err) || strings.Contains(err.Error(), "tls: certificate required")
	if !cut {
		return err
	}
	if len(e.tls.Certificates) == 0 {
		return fmt.Errorf("%w (a broker that requires a client certificate closes TLS connections like this: give --cert and --key)", err)
	}
	return fmt.Errorf("%w (a broker that does not trust the client certificate closes TLS connections like this: check that its CA signed --cert)", err)
}
