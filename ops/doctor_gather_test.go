package ops

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// doctorFake is a broker for ReadDoctor's rules of what to read: each
// vhost's snapshot, read whole (ReachVhost), and a log of the reads. The
// reads by name are the embedded nil interface: asking for one panics.
type doctorFake struct {
	broker.LadderInspector
	version                     string
	overviewErr, vhostsErr      error
	delaysErr, connErr, dialErr error
	vhosts                      []string
	snaps                       map[string]topology.Snapshot
	broken                      string // the vhost whose ladders do not read
	reads                       []string
}

func (f *doctorFake) log(what string) { f.reads = append(f.reads, what) }

func (f *doctorFake) URL() string  { return "http://fake" }
func (f *doctorFake) User() string { return "guest" }

func (f *doctorFake) Overview(context.Context) (broker.Overview, error) {
	f.log("overview")
	return broker.Overview{RabbitMQVersion: f.version, Node: "rabbit@a"}, f.overviewErr
}

func (f *doctorFake) Nodes(context.Context) ([]broker.Node, error) {
	f.log("nodes")
	return []broker.Node{{Name: "rabbit@a", Running: true, Plugins: []string{"rabbitmq_management"}}}, nil
}

func (f *doctorFake) FeatureFlags(context.Context) ([]broker.FeatureFlag, error) {
	f.log("flags")
	return []broker.FeatureFlag{{Name: "quorum_queue", State: "enabled"}}, nil
}

func (f *doctorFake) Vhosts(context.Context) ([]string, error) {
	f.log("vhosts")
	return f.vhosts, f.vhostsErr
}

func (f *doctorFake) Snapshot(_ context.Context, vhost string) (topology.Snapshot, error) {
	if vhost == f.broken {
		return topology.Snapshot{}, errors.New("forbidden")
	}
	s, ok := f.snaps[vhost]
	if !ok {
		s = topology.Snapshot{Vhost: vhost}
	}
	return s, nil
}

func (f *doctorFake) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	s, err := f.Snapshot(ctx, vhost)
	return s.Queues, err
}

func (f *doctorFake) Policies(_ context.Context, vhost string) (topology.Policies, error) {
	f.log("policies " + vhost)
	return topology.Policies{}, nil
}

func (f *doctorFake) DelaySnapshot(_ context.Context, vhost string) (topology.Snapshot, map[string]int64, error) {
	f.log("delays " + vhost)
	return topology.Snapshot{Vhost: vhost}, nil, f.delaysErr
}

func (f *doctorFake) RetryStats(_ context.Context, _ string, qs []topology.RetryQueue) ([]topology.RetryQueue, error) {
	return qs, nil
}

func (f *doctorFake) RetryQueues(_ context.Context, vhost string, _ topology.Version) ([]topology.RetryQueue, error) {
	f.log("retry queues " + vhost)
	return nil, nil
}

func (f *doctorFake) PeekFacts(context.Context, string, topology.Queue) (broker.PeekFacts, error) {
	return broker.PeekFacts{}, nil
}

// fakeConn is an AMQP connection to one vhost of a doctorFake.
type fakeConn struct {
	f     *doctorFake
	vhost string
}

func (c fakeConn) Vhost() string { return c.vhost }
func (c fakeConn) Close() error  { c.f.log("close " + c.vhost); return nil }
func (c fakeConn) Peek(context.Context, string, int) (broker.PeekResult, error) {
	return broker.PeekResult{}, nil
}

func (f *doctorFake) request(req DoctorRequest) DoctorRequest {
	req.Vhost, req.Reach, req.Timeout = fixture.Vhost, ReachVhost, time.Minute
	req.Conn = func(context.Context) (DoctorConn, error) {
		f.log("conn")
		if f.connErr != nil {
			return nil, f.connErr
		}
		return fakeConn{f, fixture.Vhost}, nil
	}
	req.Dial = func(_ context.Context, vhost string) (DoctorConn, error) {
		f.log("dial " + vhost)
		if f.dialErr != nil {
			return nil, f.dialErr
		}
		return fakeConn{f, vhost}, nil
	}
	return req
}

// TestReadDoctorReadsWhatTheRequestAsks checks ReadDoctor's rules of what
// it reads: nothing past an unanswered overview, the vhost-wide reads
// only without --ladder, delayed retry only from 4.3 (from the delay
// listing, or by the sorted listings where it failed), policies only
// where a quorum ladder is, and key samples of a Celery ladder in another
// vhost through a connection of its own, closed when read.
func TestReadDoctorReadsWhatTheRequestAsks(t *testing.T) {
	celery := fixture.Celery()
	celery.Vhost = "tasks"
	snaps := map[string]topology.Snapshot{
		fixture.Vhost: fixture.Jobs().Plan().Snapshot(),
		"tasks":       celery.Plan().Snapshot(),
	}
	refused := errors.New("refused")
	for _, c := range []struct {
		name     string
		fake     doctorFake
		req      DoctorRequest
		err      bool
		want     []string // reads made, in order
		facts    func(DoctorFacts) bool
		judgedAs string // a finding's text
	}{{
		name: "overview fails", fake: doctorFake{version: "4.3.6", overviewErr: refused},
		want:     []string{"overview"},
		facts:    func(f DoctorFacts) bool { return f.OverviewErr != nil && f.Vhosts == nil },
		judgedAs: "management API at http://fake does not answer: refused",
	}, {
		name: "4.3, every ladder", fake: doctorFake{version: "4.3.6"},
		want: []string{"overview", "conn", "nodes", "flags", "policies /", "delays /", "policies /"},
		facts: func(f DoctorFacts) bool {
			vh := f.Vhosts[0]
			return vh.DelaysRead && vh.RetryRead && vh.RetryErr == nil
		},
	}, {
		name: "4.3, delays unread: sorted listings", fake: doctorFake{version: "4.3.6", delaysErr: refused},
		want:  []string{"overview", "conn", "nodes", "flags", "policies /", "delays /", "retry queues /"},
		facts: func(f DoctorFacts) bool { vh := f.Vhosts[0]; return vh.DelaysErr != nil && vh.RetryRead },
	}, {
		name: "4.0: no delayed retry", fake: doctorFake{version: "4.0.5"},
		want:  []string{"overview", "conn", "nodes", "flags", "policies /", "delays /"},
		facts: func(f DoctorFacts) bool { vh := f.Vhosts[0]; return vh.DelaysRead && !vh.RetryRead },
	}, {
		name: "--ladder: nothing vhost-wide", fake: doctorFake{version: "4.3.6"}, req: DoctorRequest{Only: "jobs"},
		want:  []string{"overview", "conn", "nodes", "flags", "policies /"},
		facts: func(f DoctorFacts) bool { return f.Only == "jobs" && !f.Vhosts[0].DelaysRead },
	}, {
		name: "AMQP refused", fake: doctorFake{version: "4.0.5", connErr: refused}, req: DoctorRequest{Only: "jobs"},
		want:     []string{"overview", "conn", "nodes", "flags", "policies /"},
		facts:    func(f DoctorFacts) bool { return f.AMQPErr != nil },
		judgedAs: "AMQP: refused",
	}, {
		name: "every vhost unlisted", fake: doctorFake{version: "4.0.5", vhostsErr: refused}, req: DoctorRequest{AllVhosts: true},
		err: true,
	}, {
		name: "every vhost", fake: doctorFake{version: "4.0.5", vhosts: []string{"/", "tasks", "empty", "broken"}, broken: "broken"},
		req: DoctorRequest{AllVhosts: true, Target: topology.Version{Major: 4, Minor: 3}},
		want: []string{"overview", "conn", "nodes", "flags", "vhosts", "policies /", "policies tasks", "dial tasks", "close tasks",
			"delays /", "delays tasks", "delays empty"},
		facts: func(f DoctorFacts) bool {
			return len(f.Vhosts) == 4 && f.Vhosts[3].ReadErr != nil && !f.Vhosts[3].DelaysRead && f.Target.Minor == 3 &&
				len(f.Vhosts[1].KeySamples) == 1 && f.Vhosts[1].KeySamples[0].Err == nil
		},
	}, {
		name: "every vhost, another undialled", fake: doctorFake{version: "4.0.5", vhosts: []string{"tasks"}, dialErr: refused},
		req:  DoctorRequest{AllVhosts: true, Only: "celery"},
		want: []string{"overview", "conn", "nodes", "flags", "vhosts", "policies tasks", "dial tasks"},
		facts: func(f DoctorFacts) bool {
			ks := f.Vhosts[0].KeySamples
			return len(ks) == 1 && errors.Is(ks[0].Err, refused)
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			fake := c.fake
			fake.snaps = snaps
			f, err := ReadDoctor(context.Background(), &fake, fake.request(c.req))
			if c.err {
				if err == nil {
					t.Fatalf("no error: %+v", f)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fake.reads, c.want) {
				t.Errorf("read\n%q\nwant\n%q", fake.reads, c.want)
			}
			if !c.facts(f) {
				t.Errorf("facts: %+v", f)
			}
			if c.judgedAs == "" {
				return
			}
			fake.reads = nil
			fs, err := Doctor(context.Background(), &fake, fake.request(c.req))
			if _, ok := find(fs, c.judgedAs); err != nil || !ok {
				t.Errorf("doctor: %v %+v", err, fs)
			}
		})
	}
}
