package broker

import (
	"reflect"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// A message for a direct ladder goes out with its BCC header, and the
// caller's headers, shared by every message of a batch, are left alone.
func TestPublishingSetsBCC(t *testing.T) {
	shared := map[string]any{"tenant": "acme"}
	p := publishing(Message{Exchange: "jobs.ingest", RoutingKey: "0.1", BCC: []string{"i>00.1", "00>="}, Headers: shared})
	if !reflect.DeepEqual(p.Headers[topology.HeaderBCC], []any{"i>00.1", "00>="}) || p.Headers["tenant"] != "acme" {
		t.Fatalf("headers = %v", p.Headers)
	}
	if _, ok := shared[topology.HeaderBCC]; ok {
		t.Fatal("the caller's headers gained BCC")
	}
	if p := publishing(Message{BCC: []string{"i>="}}); !reflect.DeepEqual(p.Headers[topology.HeaderBCC], []any{"i>="}) {
		t.Fatalf("without headers: %v", p.Headers)
	}
	if p := publishing(Message{Headers: shared}); len(p.Headers) != 1 {
		t.Fatalf("without BCC: %v", p.Headers)
	}
}
