package lab

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// countingProxy forwards to the management API and counts the requests
// and response body bytes that pass, what a command costs the broker.
type countingProxy struct {
	url             string
	srv             *http.Server
	requests, bytes atomic.Int64
}

func newCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("management URL: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &broker.CountingTransport{Base: http.DefaultTransport, Requests: &p.requests, Bytes: &p.bytes}
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) cost() (int64, int64) { return p.requests.Load(), p.bytes.Load() }

func (p *countingProxy) close() { _ = p.srv.Close() }
