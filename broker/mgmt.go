package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/rungs-dev/rungs/topology"
)

// DefaultStatsInterval is RabbitMQ's collect_statistics_interval out of the
// box. The management API does not report the configured value (neither
// /api/overview nor /api/nodes carries it), so Overview assumes this.
const DefaultStatsInterval = 5 * time.Second

// statsColumns are the queue fields Stats asks for. Without the columns
// parameter a queue costs ~2 KB of JSON (garbage collection, backing queue
// status, sample histories); with it, ~300 bytes.
var statsColumns = strings.Join([]string{
	"name", "durable", "auto_delete", "arguments", "type", "state",
	"messages_ready", "messages_unacknowledged", "consumers",
	"message_stats.publish_details.rate", "message_stats.deliver_get_details.rate",
	// What consumers took for good, as counters: a queue that only
	// dead-lettering feeds has no publish rate, so what arrived is its
	// depth's change plus these (health.DestFlow). A queue nobody has
	// consumed from has no message_stats at all (3.10.8, 4.3.6): none taken.
	"message_stats.ack", "message_stats.deliver_no_ack", "message_stats.get_no_ack",
	"head_message_timestamp",
	// Quorum queues only (3.10 and 4.x use the same names): expired
	// messages waiting for at-least-once dead-lettering. They count in
	// neither ready nor unacknowledged.
	"messages_dlx", "message_bytes_dlx",
	// Quorum queues: messages a delayed retry holds back (4.3; counted in
	// neither ready, unacknowledged nor dlx), and the delivery limit in
	// force as the broker computed it from arguments, policies and its
	// default (4.3.6; 4.0.5 too at times). 3.10 omits both.
	"messages_delayed", "delivery_limit",
	// Where the queue runs: its leader's node (a classic queue's node),
	// and for a quorum queue its members and those online. A cluster's
	// view of which rungs lost a member and where the leaders sit.
	"node", "leader", "members", "online",
}, ",")

// ladderColumns are what a ladder's read (by name, or a listing the
// broker filters by name) asks of each queue: its statistics and the
// policies in force with their merged definition, so that status finds a
// ladder queue's delayed retry set by a policy without a request of its
// own (ops.ReadRetryBeside). The policy columns cost about 70 bytes a
// queue before compression, mostly a null and an empty object.
var ladderColumns = statsColumns + ",policy,operator_policy,effective_policy_definition"

// Errors the management client wraps; test for them with errors.Is.
var (
	// ErrUnauthorized means the management API refused the credentials or
	// the user lacks the permission or tag the request needs.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound means the API has no such object, e.g. an unknown vhost.
	ErrNotFound = errors.New("not found")
)

// APIError is an error status from the management API.
type APIError struct {
	Method string
	Path   string // e.g. /api/queues/%2F
	Status int
	// Reason is what the API said, e.g. "not_authorised: Login failed".
	Reason string
}

// Error names the request, the status and what the API said, with a hint
// for the commonest cause of a 401.
func (e *APIError) Error() string {
	s := fmt.Sprintf("management API %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Status == http.StatusUnauthorized {
		s += "; check the user name and password and that the user has a management tag"
	}
	return s
}

// Is makes errors.Is(err, ErrUnauthorized) and errors.Is(err, ErrNotFound)
// work without callers switching on status codes.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

// Management reads a broker through the HTTP management API. It is safe for
// concurrent use.
type Management struct {
	ep       endpoint
	rh       *rabbithole.Client
	http     *http.Client
	now      func() time.Time
	requests atomic.Int64
	bytes    atomic.Int64
	// noDefinitions is set once /api/definitions refused us: exporting
	// definitions needs the administrator tag, and a monitoring user
	// should not pay a failed request on every refresh.
	noDefinitions atomic.Bool
	// version is the broker's release, read once: rules that differ by
	// release (quorum delivery limits) need it, and it changes only with
	// an upgrade, which drops our connections anyway.
	version atomic.Pointer[topology.Version]
	// defs holds each vhost's last definitions with their entity tag
	// (vhost → *taggedDefinitions): see cachedDefinitions.
	defs sync.Map
}

var _ Inspector = (*Management)(nil)

// NewManagement builds a management API client. It does not contact the
// broker.
func NewManagement(cfg Config) (*Management, error) {
	ep, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	if ep.tls != nil {
		base.TLSClientConfig = ep.tls.Clone()
	}
	m := &Management{ep: ep, now: time.Now}
	rt := &CountingTransport{Base: base, Requests: &m.requests, Bytes: &m.bytes}
	m.http = &http.Client{Transport: rt, Timeout: ep.timeout}
	m.rh, err = rabbithole.NewTLSClient(ep.mgmtURL, ep.mgmtUser, ep.mgmtPass, rt)
	if err != nil {
		return nil, ep.redact(fmt.Errorf("management client: %w", err))
	}
	m.rh.SetTimeout(ep.timeout)
	return m, nil
}

// Cost reports how many requests the client has made and how many response
// body bytes it has read, so that a refresh's cost can be measured.
func (m *Management) Cost() (requests, bytes int64) {
	return m.requests.Load(), m.bytes.Load()
}

// User is the user name the client authenticates as.
func (m *Management) User() string { return m.ep.mgmtUser }

// URL is the management API base URL, without credentials.
func (m *Management) URL() string { return m.ep.mgmtURL }

// Snapshot implements Inspector: exchanges and bindings from the vhost's
// definitions, queues from Stats, fetched concurrently. It reads the
// whole vhost, which is what drift checks of the vhost (doctor, apply)
// need; a reader that shows some ladders should use LadderSnapshot, whose
// cost follows the ladders rather than the vhost.
func (m *Management) Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error) {
	snap := topology.Snapshot{Vhost: vhost}
	var wg sync.WaitGroup
	var defErr, statsErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		snap.Exchanges, snap.Bindings, defErr = m.definitions(ctx, vhost)
	}()
	snap.Queues, statsErr = m.Stats(ctx, vhost)
	wg.Wait()
	if defErr != nil {
		defErr = m.accessError(ctx, vhost, defErr)
	}
	if errors.Is(statsErr, ErrNoAccess) {
		// Both requests were refused for the same reason: say it once.
		return topology.Snapshot{Vhost: vhost}, statsErr
	}
	if err := errors.Join(defErr, statsErr); err != nil {
		return topology.Snapshot{Vhost: vhost}, fmt.Errorf("snapshot of vhost %q: %w", vhost, err)
	}
	return snap, nil
}

type apiExchange struct {
	Vhost      string         `json:"vhost"`
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete flexBool       `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

type apiBinding struct {
	Vhost           string         `json:"vhost"`
	Source          string         `json:"source"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments"`
}

type apiDefinitions struct {
	Exchanges []apiExchange `json:"exchanges"`
	Bindings  []apiBinding  `json:"bindings"`
}

// definitions reads a vhost's exchanges and bindings in one request, or in
// two (exchanges, bindings) when the user may not export definitions.
func (m *Management) definitions(ctx context.Context, vhost string) ([]topology.Exchange, []topology.Binding, error) {
	v := url.PathEscape(vhost)
	var defs apiDefinitions
	if !m.noDefinitions.Load() {
		err := m.cachedDefinitions(ctx, vhost, &defs)
		if err == nil {
			return mapExchanges(defs.Exchanges), mapBindings(defs.Bindings), nil
		}
		if !errors.Is(err, ErrUnauthorized) {
			return nil, nil, err
		}
	}
	err := m.get(ctx, "exchanges/"+v, url.Values{"columns": {"name,type,durable,auto_delete,internal,arguments"}}, &defs.Exchanges)
	if err != nil {
		return nil, nil, err
	}
	err = m.get(ctx, "bindings/"+v, url.Values{"columns": {"source,destination,destination_type,routing_key,arguments"}}, &defs.Bindings)
	if err != nil {
		return nil, nil, err
	}
	m.noDefinitions.Store(true)
	return mapExchanges(defs.Exchanges), mapBindings(defs.Bindings), nil
}

// mapExchanges keeps the exchanges a vhost's definitions export holds: the
// default exchange and the amq.* ones are built in, never declared, and the
// exchanges endpoint lists them while definitions do not.
func mapExchanges(in []apiExchange) []topology.Exchange {
	out := make([]topology.Exchange, 0, len(in))
	for _, x := range in {
		if x.Name == "" || strings.HasPrefix(x.Name, "amq.") {
			continue
		}
		out = append(out, topology.Exchange{
			Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: bool(x.AutoDelete),
			Internal: x.Internal, Args: mapArgs(x.Arguments),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mapBindings drops the default exchange's implicit binding to every queue,
// which the bindings endpoint lists and definitions do not.
func mapBindings(in []apiBinding) []topology.Binding {
	out := make([]topology.Binding, 0, len(in))
	for _, b := range in {
		if b.Source == "" {
			continue
		}
		out = append(out, topology.Binding{
			Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType,
			RoutingKey: b.RoutingKey, Args: mapArgs(b.Arguments),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.DestinationType != b.DestinationType {
			return a.DestinationType < b.DestinationType
		}
		if a.Destination != b.Destination {
			return a.Destination < b.Destination
		}
		return a.RoutingKey < b.RoutingKey
	})
	return out
}

type apiRate struct {
	Rate float64 `json:"rate"`
}

type apiQueue struct {
	Vhost        string         `json:"vhost"`
	Name         string         `json:"name"`
	Durable      bool           `json:"durable"`
	AutoDelete   flexBool       `json:"auto_delete"`
	Arguments    map[string]any `json:"arguments"`
	Type         string         `json:"type"`
	State        string         `json:"state"`
	Ready        int64          `json:"messages_ready"`
	Unacked      int64          `json:"messages_unacknowledged"`
	Consumers    int64          `json:"consumers"`
	MessageStats struct {
		Publish      apiRate `json:"publish_details"`
		DeliverGet   apiRate `json:"deliver_get_details"`
		Ack          int64   `json:"ack"`
		DeliverNoAck int64   `json:"deliver_no_ack"`
		GetNoAck     int64   `json:"get_no_ack"`
	} `json:"message_stats"`
	// HeadTimestamp is the head message's timestamp property in seconds;
	// absent for quorum queues and for messages published without one.
	HeadTimestamp *float64 `json:"head_message_timestamp"`
	DLX           int64    `json:"messages_dlx"`
	DLXBytes      int64    `json:"message_bytes_dlx"`
	Delayed       *int64   `json:"messages_delayed"`
	// DeliveryLimit is a number, or "unlimited" where no limit applies.
	DeliveryLimit any `json:"delivery_limit"`
	// Node is where a classic queue runs; a quorum queue's leader, as
	// leader says too.
	Node    string   `json:"node"`
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
	// Policy and OperatorPolicy name the policies in force (null for
	// none) and Effective is their merged definition, as the broker
	// applies it; only the listings that judge delayed retry ask.
	Policy         *string        `json:"policy"`
	OperatorPolicy *string        `json:"operator_policy"`
	Effective      map[string]any `json:"effective_policy_definition"`
}

// Stats implements Inspector with one request using the columns parameter.
// A new quorum queue reports no figures until the broker's next statistics
// emission; they read as zero. It lists every queue of the vhost: a
// reader showing some ladders beside many other queues should use
// LadderStats.
func (m *Management) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	var qs []apiQueue
	if err := m.get(ctx, "queues/"+url.PathEscape(vhost), url.Values{"columns": {statsColumns}}, &qs); err != nil {
		return nil, m.accessError(ctx, vhost, err)
	}
	return m.toQueues(qs), nil
}

// toQueues maps the API's queues, sorted by name.
func (m *Management) toQueues(qs []apiQueue) []topology.Queue {
	now := m.now()
	out := make([]topology.Queue, 0, len(qs))
	for _, q := range qs {
		if q.Name == "" {
			continue // deleted while the broker listed (see decodeAnswer)
		}
		tq := topology.Queue{
			Name: q.Name, Durable: q.Durable, AutoDelete: bool(q.AutoDelete), Args: mapArgs(q.Arguments),
			Stats: topology.QueueStats{
				Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers,
				PublishRate: q.MessageStats.Publish.Rate, DeliverRate: q.MessageStats.DeliverGet.Rate,
				Taken: q.MessageStats.Ack + q.MessageStats.DeliverNoAck + q.MessageStats.GetNoAck,
				Type:  q.Type, State: q.State, Expired: q.DLX, ExpiredBytes: q.DLXBytes,
				Leader: q.Leader, Members: q.Members, Online: q.Online,
			},
			EffectivePolicy: q.Effective,
		}
		if q.Delayed != nil {
			tq.Stats.Delayed, tq.Stats.DelayedReported = *q.Delayed, true
		}
		if q.Policy != nil || q.OperatorPolicy != nil {
			tq.PolicyReported = true
			if q.Policy != nil {
				tq.Policy = *q.Policy
			}
			if q.OperatorPolicy != nil {
				tq.OperatorPolicy = *q.OperatorPolicy
			}
		}
		if tq.Stats.Leader == "" {
			tq.Stats.Leader = q.Node
		}
		tq.Stats.DeliveryLimit, tq.Stats.DeliveryLimitReported = reportedLimit(q.DeliveryLimit)
		if q.HeadTimestamp != nil && *q.HeadTimestamp > 0 {
			head := time.Unix(int64(*q.HeadTimestamp), 0)
			if age := now.Sub(head); age > 0 {
				tq.Stats.HeadAge = age
			}
		}
		out = append(out, tq)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// reportedLimit reads the delivery_limit statistic: > 0 a limit, 0 none
// ("unlimited", or a 0 or negative number); ok is false when the broker did
// not say (before 4.3, and classic queues).
func reportedLimit(v any) (limit int, ok bool) {
	switch n := v.(type) {
	case json.Number: // get decodes with UseNumber
		if i, err := n.Int64(); err == nil {
			return max(int(i), 0), true
		}
	case string:
		return 0, true
	}
	return 0, false
}

// Overview implements Inspector.
func (m *Management) Overview(ctx context.Context) (Overview, error) {
	var o struct {
		RabbitMQVersion string `json:"rabbitmq_version"`
		ErlangVersion   string `json:"erlang_version"`
		ClusterName     string `json:"cluster_name"`
		Node            string `json:"node"`
	}
	// None of these is a statistic: without disable_stats the broker
	// still gathers the cluster's message and queue totals for the
	// answer, 20 to 150 ms beside 10,000 queues on 4.3.6 where this takes
	// 4 to 13 ms; status reads the release on every run.
	cols := url.Values{"columns": {"rabbitmq_version,erlang_version,cluster_name,node"}, "disable_stats": {"true"}}
	if err := m.get(ctx, "overview", cols, &o); err != nil {
		return Overview{}, err
	}
	return Overview{
		RabbitMQVersion: o.RabbitMQVersion, ErlangVersion: o.ErlangVersion,
		ClusterName: o.ClusterName, Node: o.Node, StatsInterval: DefaultStatsInterval,
	}, nil
}

// Vhosts implements Inspector; the names are sorted.
func (m *Management) Vhosts(ctx context.Context) ([]string, error) {
	var vs []struct {
		Name string `json:"name"`
	}
	if err := m.get(ctx, "vhosts", url.Values{"columns": {"name"}}, &vs); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		// A vhost deleted while the broker listed has no name (see
		// decodeAnswer).
		if v.Name != "" {
			out = append(out, v.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// CreateVhost creates a vhost and gives the client's user full permissions
// in it. Creating an existing vhost is not an error.
func (m *Management) CreateVhost(ctx context.Context, name string) error {
	if m.ep.readOnly {
		return ErrReadOnly
	}
	path := "/api/vhosts/" + url.PathEscape(name)
	if err := m.call(ctx, http.MethodPut, path, func() (*http.Response, error) {
		return m.rh.PutVhost(name, rabbithole.VhostSettings{Description: "created by rungs"})
	}); err != nil {
		return err
	}
	path = "/api/permissions/" + url.PathEscape(name) + "/" + url.PathEscape(m.ep.mgmtUser)
	return m.call(ctx, http.MethodPut, path, func() (*http.Response, error) {
		return m.rh.UpdatePermissionsIn(name, m.ep.mgmtUser, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	})
}

// DeleteVhost deletes a vhost and everything in it. A missing vhost is not
// an error.
func (m *Management) DeleteVhost(ctx context.Context, name string) error {
	if m.ep.readOnly {
		return ErrReadOnly
	}
	return m.call(ctx, http.MethodDelete, "/api/vhosts/"+url.PathEscape(name), func() (*http.Response, error) {
		return m.rh.DeleteVhost(name)
	})
}

// Connections names the client connections to a vhost. The management API
// lists a connection only after the broker's next statistics emission, up
// to one statistics interval after it opened.
func (m *Management) Connections(ctx context.Context, vhost string) ([]string, error) {
	var conns []rabbithole.ConnectionInfo
	path := "/api/vhosts/" + url.PathEscape(vhost) + "/connections"
	err := m.call(ctx, http.MethodGet, path, func() (*http.Response, error) {
		var err error
		conns, err = m.rh.ListVhostConnections(vhost)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(conns))
	for i, c := range conns {
		names[i] = c.Name
	}
	sort.Strings(names)
	return names, nil
}

// CloseConnections closes every client connection to a vhost that the
// management API lists (see Connections), as a broker restart or a network
// failure would, and returns how many it closed.
func (m *Management) CloseConnections(ctx context.Context, vhost string) (int, error) {
	if m.ep.readOnly {
		return 0, ErrReadOnly
	}
	names, err := m.Connections(ctx, vhost)
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, name := range names {
		err := m.call(ctx, http.MethodDelete, "/api/connections/"+url.PathEscape(name), func() (*http.Response, error) {
			return m.rh.CloseConnection(name)
		})
		if err != nil {
			return closed, err
		}
		closed++
	}
	return closed, nil
}

// call runs a rabbit-hole request, which takes no context, in a goroutine so
// that ctx still bounds the wait; the abandoned request ends at the client's
// timeout. Errors are mapped to *APIError and scrubbed.
func (m *Management) call(ctx context.Context, method, path string, f func() (*http.Response, error)) error {
	done := make(chan error, 1)
	go func() {
		res, err := f()
		if res != nil && res.Body != nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		return nil
	}
	var er rabbithole.ErrorResponse
	switch {
	case errors.As(err, &er):
		err = &APIError{Method: method, Path: path, Status: er.StatusCode, Reason: joinReason(er.Message, er.Reason)}
	case strings.Contains(err.Error(), "401 Unauthorized"):
		// rabbit-hole reports a 401 as a plain string error.
		err = &APIError{Method: method, Path: path, Status: http.StatusUnauthorized}
	default:
		err = fmt.Errorf("management API %s %s at %s: %w", method, path, m.ep.mgmtURL, m.transportError(ctx, err))
	}
	return m.ep.redact(err)
}

// get sends GET /api/path and decodes the JSON answer into out. Unlike
// rabbit-hole's requests it takes ctx and keeps the connection alive, which
// matters for a console polling every few seconds.
func (m *Management) get(ctx context.Context, path string, q url.Values, out any) error {
	_, _, err := m.getTagged(ctx, path, q, out, "")
	return err
}

// getTagged is get with an entity tag: when etag is set it asks
// If-None-Match, and notModified reports the broker's 304, with out left
// alone. tag is the response's ETag, empty when the broker sends none.
func (m *Management) getTagged(ctx context.Context, path string, q url.Values, out any, etag string) (tag string, notModified bool, err error) {
	apiPath := "/api/" + path
	u := m.ep.mgmtURL + apiPath
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", false, m.ep.redact(fmt.Errorf("management API GET %s: %w", apiPath, err))
	}
	req.SetBasicAuth(m.ep.mgmtUser, m.ep.mgmtPass)
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	res, err := m.doGet(ctx, req)
	if err != nil {
		return "", false, m.ep.redact(fmt.Errorf("management API GET %s at %s: %w", apiPath, m.ep.mgmtURL, m.transportError(ctx, err)))
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotModified && etag != "" {
		return etag, true, nil
	}
	if res.StatusCode >= 300 {
		return "", false, m.ep.redact(&APIError{Method: http.MethodGet, Path: apiPath, Status: res.StatusCode, Reason: readReason(res.Body)})
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", false, m.ep.redact(fmt.Errorf("management API GET %s at %s: reading the response: %w", apiPath, m.ep.mgmtURL, m.transportError(ctx, err)))
	}
	if err := decodeAnswer(body, out); err != nil {
		return "", false, m.ep.redact(fmt.Errorf("management API GET %s: decoding the response: %w", apiPath, err))
	}
	return res.Header.Get("ETag"), false, nil
}

// serverErrorRetries are the pauses before asking again after a 500.
// RabbitMQ 4.0.5's vhost listing crashes (function_clause in
// rabbit_mgmt_wm_vhosts) when a vhost is deleted while it lists, which
// another client may do at any moment; the next request succeeds.
var serverErrorRetries = []time.Duration{50 * time.Millisecond, 250 * time.Millisecond}

// doGet sends a GET, asking again after a 500 (a GET changes nothing, so
// asking twice is safe). The last answer is returned whatever it is.
func (m *Management) doGet(ctx context.Context, req *http.Request) (*http.Response, error) {
	for _, pause := range serverErrorRetries {
		res, err := m.http.Do(req)
		if err != nil || res.StatusCode != http.StatusInternalServerError {
			return res, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
	return m.http.Do(req)
}

// readReason extracts the API's {"error","reason"} body, or a short snippet
// of whatever else the server sent (a proxy's HTML page, say).
func readReason(r io.Reader) string {
	body, _ := io.ReadAll(io.LimitReader(r, 4096))
	var e struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Error != "" || e.Reason != "") {
		return joinReason(e.Error, e.Reason)
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func joinReason(e, reason string) string {
	switch {
	case e == "":
		return reason
	case reason == "" || reason == e:
		return e
	}
	return e + ": " + reason
}

// transportError drops net/http's `Get "URL": ` prefix (callers name the
// request themselves) and says when the client's own timeout, not the
// caller's context, cut the request short.
func (m *Management) transportError(ctx context.Context, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err)) {
		return fmt.Errorf("no answer within %s: %w", m.ep.timeout, err)
	}
	return m.ep.tlsHint(err)
}

// mapArgs normalises x-arguments as topology expects: JSON numbers become
// int64 where integral; an empty map becomes nil, as in a plan.
func mapArgs(in map[string]any) topology.Args {
	if len(in) == 0 {
		return nil
	}
	out := make(topology.Args, len(in))
	for k, v := range in {
		out[k] = jsonValue(v)
	}
	return out
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return topology.NormalizeArg(f)
		}
		return x.String()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}

// flexBool reads a boolean that some broker versions send as a string
// (auto_delete was "true"/"false" in older releases).
type flexBool bool

// UnmarshalJSON accepts true, false, "true", "false" and null.
func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch strings.Trim(string(data), `"`) {
	case "true":
		*b = true
	case "false", "null", "":
		*b = false
	default:
		return fmt.Errorf("not a boolean: %s", data)
	}
	return nil
}
