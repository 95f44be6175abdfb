package broker

import "net/http"

// RecordRequests has m pass every request to rec before sending it, so
// that a test can check which objects a read fetched. Call it before m is
// used.
func RecordRequests(m *Management, rec func(*http.Request)) {
	ct := m.http.Transport.(*CountingTransport)
	ct.Base = recordingTransport{base: ct.Base, rec: rec}
}

type recordingTransport struct {
	base http.RoundTripper
	rec  func(*http.Request)
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.rec(req)
	return t.base.RoundTrip(req)
}

// HoldWindow is the prefetch of each consumer a scan or a holding move
// starts.
const HoldWindow = holdWindow
