package broker

import (
	"io"
	"net/http"
	"sync/atomic"
)

// CountingTransport counts the requests that pass and the response body
// bytes read, what a read costs the management API: the client of every
// Management (Cost) and the lab's proxy in front of a rungs command.
type CountingTransport struct {
	Base            http.RoundTripper
	Requests, Bytes *atomic.Int64
}

// RoundTrip counts the request and wraps the body to count what is read.
func (t *CountingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.Requests.Add(1)
	res, err := t.Base.RoundTrip(req)
	if res != nil && res.Body != nil {
		res.Body = &countingBody{ReadCloser: res.Body, n: t.Bytes}
	}
	return res, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

// Read counts the bytes read.
func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
