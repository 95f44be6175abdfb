package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// CapacityParameter is the global runtime parameter in which `rungs bench
// --drain --save` keeps the drain capacities it measured on this broker.
// It lives on the broker, not in a local file, so that every front end
// that meets the broker (publish, the console, the exporter, on any
// machine) reads the same figure, and a figure measured on one broker is
// never used for another.
const CapacityParameter = "rungs-drain-capacity"

// DrainCapacity is one measured drain capacity: the dead-letter hops a
// second the broker's rungs of one kind forwarded while a backlog waited.
type DrainCapacity struct {
	HopsPerS float64   `json:"hops_per_s"`
	RabbitMQ string    `json:"rabbitmq"`
	Measured time.Time `json:"measured"`
	// N is the burst it was measured with, Load the machine's load
	// average at its peak.
	N    int    `json:"n"`
	Load string `json:"load,omitempty"`
}

// DrainCapacities reads the saved capacities, keyed by the rungs' kind
// (CapacityKey). A broker without any answers an empty map, not an error.
func (m *Management) DrainCapacities(ctx context.Context) (map[string]DrainCapacity, error) {
	var p struct {
		Value map[string]DrainCapacity `json:"value"`
	}
	err := m.get(ctx, "global-parameters/"+CapacityParameter, nil, &p)
	if errors.Is(err, ErrNotFound) {
		return map[string]DrainCapacity{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("drain capacity: %w", err)
	}
	if p.Value == nil {
		p.Value = map[string]DrainCapacity{}
	}
	return p.Value, nil
}

// SaveDrainCapacity stores c under key, keeping the other kinds' figures.
func (m *Management) SaveDrainCapacity(ctx context.Context, key string, c DrainCapacity) error {
	if m.ep.readOnly {
		return ErrReadOnly
	}
	all, err := m.DrainCapacities(ctx)
	if err != nil {
		return err
	}
	all[key] = c
	body, err := json.Marshal(map[string]any{"name": CapacityParameter, "value": all})
	if err != nil {
		return err
	}
	if err := m.send(ctx, http.MethodPut, "global-parameters/"+CapacityParameter, body); err != nil {
		return fmt.Errorf("save drain capacity: %w", err)
	}
	return nil
}

// CapacityKey names the kind of rungs a capacity was measured on: their
// queue type, and the dead-letter strategy when it is not the one rungs
// declares (at-least-once on quorum rungs).
func CapacityKey(queueType string, atMostOnce bool) string {
	if queueType == "quorum" && atMostOnce {
		return "quorum at-most-once"
	}
	return queueType
}

// ForgetDrainCapacity removes the figure saved under key, and the
// parameter itself once it holds none.
func (m *Management) ForgetDrainCapacity(ctx context.Context, key string) error {
	if m.ep.readOnly {
		return ErrReadOnly
	}
	all, err := m.DrainCapacities(ctx)
	if err != nil {
		return err
	}
	if _, ok := all[key]; !ok {
		return nil
	}
	delete(all, key)
	path := "global-parameters/" + CapacityParameter
	if len(all) == 0 {
		err = m.send(ctx, http.MethodDelete, path, nil)
	} else {
		var body []byte
		if body, err = json.Marshal(map[string]any{"name": CapacityParameter, "value": all}); err == nil {
			err = m.send(ctx, http.MethodPut, path, body)
		}
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("forget drain capacity: %w", err)
	}
	return nil
}
