package lab

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// The beside phase at a small N: the ladder alone and beside 300 other
// queues, each vhost removed afterwards, and the observer counting every
// message in flight in both. Timings are not assertions.
func TestBesideSmall(t *testing.T) {
	env := brokertest.Require(t)
	l, err := topology.Ladder{Name: "beside", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 16, QueueType: topology.Classic}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	o := BesideOptions{Others: []int{300}, Ladder: l, InFlight: 5, Runs: 1, Log: logWriter{t}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := RunBeside(ctx, env.Config, env.Mgmt, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Others != 0 || rep.Rows[1].Others != 300 {
		t.Fatalf("rows %+v, want the ladder alone and beside 300", rep.Rows)
	}
	for _, row := range rep.Rows {
		if row.First.Requests == 0 || row.Refresh.Requests == 0 || row.Refresh.Bytes == 0 {
			t.Errorf("beside %d: console first read %+v, refresh %+v", row.Others, row.First, row.Refresh)
		}
	}
	vs, err := env.Mgmt.Vhosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if strings.HasPrefix(v, "rungs-lab-beside-") {
			t.Errorf("vhost %s was left behind", v)
		}
	}
	if md := rep.Markdown(); !strings.Contains(md, "| 300 |") {
		t.Errorf("markdown lacks the row beside 300:\n%s", md)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}
