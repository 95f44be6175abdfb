package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/rungs-dev/rungs/topology"
)

// Definitions are RabbitMQ's definitions format, the one `rabbitmqctl
// export_definitions`, the management UI and GET /api/definitions write and
// `rabbitmqctl import_definitions` and POST /api/definitions read, reduced
// to the three lists a ladder consists of. Other top-level keys of an export
// (users, policies, parameters...) are ignored when reading.
type Definitions struct {
	Exchanges []DefExchange `json:"exchanges"`
	Queues    []DefQueue    `json:"queues"`
	Bindings  []DefBinding  `json:"bindings"`
}

// DefExchange is one exchange of a definitions file.
type DefExchange struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost,omitempty"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete flexBool       `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

// DefQueue is one queue of a definitions file.
type DefQueue struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost,omitempty"`
	Durable    bool           `json:"durable"`
	AutoDelete flexBool       `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

// DefBinding is one binding of a definitions file.
type DefBinding struct {
	Source          string         `json:"source"`
	Vhost           string         `json:"vhost,omitempty"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments"`
}

// PlanDefinitions writes a plan as definitions for vhost, in the plan's
// declaration order. Every object names its vhost, as a broker-wide export
// does; importing into one vhost with POST /api/definitions/VHOST puts the
// objects there whatever they name.
func PlanDefinitions(p topology.Plan, vhost string) Definitions {
	d := Definitions{Exchanges: []DefExchange{}, Queues: []DefQueue{}, Bindings: []DefBinding{}}
	for _, x := range p.Exchanges {
		d.Exchanges = append(d.Exchanges, DefExchange{
			Name: x.Name, Vhost: vhost, Type: x.Type, Durable: x.Durable, AutoDelete: flexBool(x.AutoDelete),
			Internal: x.Internal, Arguments: plainArgs(x.Args),
		})
	}
	for _, q := range p.Queues {
		d.Queues = append(d.Queues, DefQueue{Name: q.Name, Vhost: vhost, Durable: q.Durable, AutoDelete: flexBool(q.AutoDelete), Arguments: plainArgs(q.Args)})
	}
	for _, b := range p.Bindings {
		d.Bindings = append(d.Bindings, DefBinding{
			Source: b.Source, Vhost: vhost, Destination: b.Destination, DestinationType: b.DestinationType,
			RoutingKey: b.RoutingKey, Arguments: plainArgs(b.Args),
		})
	}
	return d
}

// plainArgs is never nil: the format writes {} for no arguments.
func plainArgs(a topology.Args) map[string]any {
	out := map[string]any{}
	for k, v := range a.Normalized() {
		out[k] = v
	}
	return out
}

// MarshalJSON writes flexBool as a plain boolean.
func (b flexBool) MarshalJSON() ([]byte, error) { return json.Marshal(bool(b)) }

// ParseDefinitions reads a definitions file (a whole-broker export or one
// vhost's) into the snapshot of one vhost: objects that name another vhost
// are left out, objects that name none (a vhost's own export) are kept.
func ParseDefinitions(data []byte, vhost string) (topology.Snapshot, error) {
	var d Definitions
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return topology.Snapshot{}, fmt.Errorf("definitions: %w", err)
	}
	in := func(v string) bool { return v == "" || v == vhost }
	snap := topology.Snapshot{Vhost: vhost}
	for _, x := range d.Exchanges {
		if in(x.Vhost) && x.Name != "" && !isBuiltinExchange(x.Name) {
			snap.Exchanges = append(snap.Exchanges, topology.Exchange{
				Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: bool(x.AutoDelete),
				Internal: x.Internal, Args: mapArgs(x.Arguments),
			})
		}
	}
	for _, q := range d.Queues {
		if in(q.Vhost) {
			snap.Queues = append(snap.Queues, topology.Queue{Name: q.Name, Durable: q.Durable, AutoDelete: bool(q.AutoDelete), Args: mapArgs(q.Arguments)})
		}
	}
	for _, b := range d.Bindings {
		if in(b.Vhost) && b.Source != "" {
			snap.Bindings = append(snap.Bindings, topology.Binding{
				Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType,
				RoutingKey: b.RoutingKey, Args: mapArgs(b.Arguments),
			})
		}
	}
	sort.Slice(snap.Exchanges, func(i, j int) bool { return snap.Exchanges[i].Name < snap.Exchanges[j].Name })
	sort.Slice(snap.Queues, func(i, j int) bool { return snap.Queues[i].Name < snap.Queues[j].Name })
	return snap, nil
}

func isBuiltinExchange(name string) bool { return len(name) > 4 && name[:4] == "amq." }

// ImportDefinitions loads definitions into one vhost through the management
// API (POST /api/definitions/VHOST), as `rabbitmqctl import_definitions`
// does for a whole broker. Existing objects with the same definition are
// left alone; the broker refuses the whole import if one differs.
func (m *Management) ImportDefinitions(ctx context.Context, vhost string, data []byte) error {
	if m.ep.readOnly {
		return ErrReadOnly
	}
	return m.send(ctx, http.MethodPost, "definitions/"+url.PathEscape(vhost), data)
}

// send makes a request with a JSON body and discards a successful answer.
// Errors are *APIError or transport errors, scrubbed of credentials.
func (m *Management) send(ctx context.Context, method, path string, body []byte) error {
	return m.sendAccepting(ctx, method, path, body, "application/json")
}

// sendAccepting is send with the Accept header given ("" for none).
func (m *Management) sendAccepting(ctx context.Context, method, path string, body []byte, accept string) error {
	apiPath := "/api/" + path
	req, err := http.NewRequestWithContext(ctx, method, m.ep.mgmtURL+apiPath, bytes.NewReader(body))
	if err != nil {
		return m.ep.redact(fmt.Errorf("management API %s %s: %w", method, apiPath, err))
	}
	req.SetBasicAuth(m.ep.mgmtUser, m.ep.mgmtPass)
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if method == http.MethodPut || method == http.MethodDelete {
		// Both are idempotent in the management API. Marked so (a key
		// with no value is not sent), Go's transport resends one whose
		// kept-alive connection the server closed as it went out: a PUT
		// of a policy failed with EOF on 4.3.6 otherwise.
		req.Header["Idempotency-Key"] = nil
	}
	res, err := m.http.Do(req)
	if err != nil {
		return m.ep.redact(fmt.Errorf("management API %s %s at %s: %w", method, apiPath, m.ep.mgmtURL, m.transportError(ctx, err)))
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return m.ep.redact(&APIError{Method: method, Path: apiPath, Status: res.StatusCode, Reason: readReason(res.Body)})
	}
	return nil
}
