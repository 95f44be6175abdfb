package ops

import (
	"context"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// DoctorReader is what doctor reads through the management API
// (*broker.Management): the broker's overview, nodes and feature flags,
// its vhosts, each vhost's ladders (as far as DoctorRequest.Reach says),
// policies, delays and delayed retry, and the peek facts of the Celery
// rungs whose keys it samples.
type DoctorReader interface {
	ScopedInspector
	DelayReader
	ListedRetryReader
	RetryReader
	PeekFacter
	URL() string
	User() string
	Overview(ctx context.Context) (broker.Overview, error)
	Nodes(ctx context.Context) ([]broker.Node, error)
	FeatureFlags(ctx context.Context) ([]broker.FeatureFlag, error)
	Vhosts(ctx context.Context) ([]string, error)
}

var _ DoctorReader = (*broker.Management)(nil)

// DoctorConn is an AMQP connection doctor reads through (*broker.Conn):
// it checks that the credentials open one and peeks at the heads of
// Celery rungs and unroutable queues.
type DoctorConn interface {
	KeyPeeker
	Vhost() string
	Close() error
}

var _ DoctorConn = (*broker.Conn)(nil)

// DoctorRequest is what doctor is asked, as a front end gathers it.
type DoctorRequest struct {
	// Vhost is the front end's vhost, the one read without AllVhosts.
	Vhost string
	// Only is the one ladder asked about (--ladder), "" for all.
	Only      string
	AllVhosts bool
	// Target is the release an upgrade goes to (--target), zero for none.
	Target topology.Version
	// Reach is how far the ladders' reads go: ReachScoped, by name, for
	// the management API; ReachVhost for a reader without reads by name.
	Reach Reach
	// Timeout bounds each request (0: the context's own), and twice it
	// each sample of routing keys, which asks several.
	Timeout time.Duration
	// Conn is the front end's own AMQP connection, in Vhost; it stays
	// open. Dial opens one to another vhost (AllVhosts), which Doctor
	// closes once it has read through it.
	Conn func(context.Context) (DoctorConn, error)
	Dial func(ctx context.Context, vhost string) (DoctorConn, error)
	// Watching, when set, hears that doctor watches rungs for stalled
	// dead-lettering, and for how long: the wait it is about to make.
	Watching func(StallWatch)
}

// Doctor is doctor's one entry point: it reads what the request asks of
// the broker through r (ReadDoctor) and judges it (Judge). A failed read
// is a finding; only an unreadable list of vhosts is an error.
func Doctor(ctx context.Context, r DoctorReader, req DoctorRequest) (Findings, error) {
	f, err := ReadDoctor(ctx, r, req)
	if err != nil {
		return nil, err
	}
	return Judge(f), nil
}

// ReadDoctor reads what Judge judges. A failed read is a fact to report,
// not an error; only an unreadable list of vhosts stops doctor.
func ReadDoctor(ctx context.Context, r DoctorReader, req DoctorRequest) (DoctorFacts, error) {
	f := DoctorFacts{API: r.URL(), User: r.User(), Only: req.Only, Flags: map[string]bool{}, Target: req.Target}
	if f.Overview, f.OverviewErr = bounded(ctx, req.Timeout, r.Overview); f.OverviewErr != nil {
		return f, nil
	}
	if c, err := req.Conn(ctx); err != nil {
		f.AMQPErr = err
	} else {
		f.AMQPVhost = c.Vhost()
	}
	f.Nodes, f.NodesErr = bounded(ctx, req.Timeout, r.Nodes)
	ffs, err := bounded(ctx, req.Timeout, r.FeatureFlags)
	for _, ff := range ffs {
		f.Flags[ff.Name] = ff.Enabled()
	}
	f.FlagsErr = err
	vhosts := []string{req.Vhost}
	if req.AllVhosts {
		if vhosts, err = bounded(ctx, req.Timeout, r.Vhosts); err != nil {
			return f, err
		}
	}
	req.readVhosts(ctx, r, &f, vhosts)
	if req.Only == "" {
		req.readVhostWide(ctx, r, &f)
	}
	return f, nil
}

// readVhosts observes the ladders of each vhost (Only: the ladder of that
// name) and what Judge judges of them.
func (req DoctorRequest) readVhosts(ctx context.Context, r DoctorReader, f *DoctorFacts, vhosts []string) {
	insp := Bounded{Insp: r, Timeout: req.Timeout}
	observers := map[string]Observer{}
	for _, vh := range vhosts {
		scope := DoctorScope(vh, req.Only)
		scope.Reach = req.Reach
		o, err := ReadLadders(ctx, insp, scope)
		if err != nil {
			f.Vhosts = append(f.Vhosts, DoctorVhost{Vhost: vh, ReadErr: err})
			continue
		}
		observers[vh] = o
		f.Vhosts = append(f.Vhosts, DoctorVhost{Vhost: vh, Found: o.Found()})
	}
	// Stalled dead-lettering shows only across samples: watch the vhosts
	// whose rungs hold expired messages (a no-op for the others).
	for i := range f.Vhosts {
		vh := &f.Vhosts[i]
		o, ok := observers[vh.Vhost]
		if !ok {
			continue
		}
		o, vh.WatchErr = o.WatchStalls(ctx, insp, time.Now, Sleep, req.Watching)
		if vh.Vhost == req.Vhost {
			o = req.readUnrouted(ctx, r, o, f.Version())
		}
		vh.Report = o.Report(o.At())
		if ReadsPolicies(vh.Report) {
			vh.Policies, vh.PoliciesErr = bounded(ctx, req.Timeout, func(c context.Context) (topology.Policies, error) {
				return r.Policies(c, vh.Vhost)
			})
		}
		vh.KeySamples = req.sampleCeleryKeys(ctx, r, vh)
	}
}

// readUnrouted reads, through the front end's own connection, the
// destinations named in its vhost's unroutable queues (ReadUnrouted)
// where the observer has some unread; without AMQP the observer is
// returned as it was, and the report names no destination it cannot see.
func (req DoctorRequest) readUnrouted(ctx context.Context, r DoctorReader, o Observer, v topology.Version) Observer {
	if !o.UnroutedUnread() {
		return o
	}
	conn, err := req.Conn(ctx)
	if err != nil {
		return o
	}
	o, _ = bounded(ctx, 2*req.Timeout, func(c context.Context) (Observer, error) {
		return ReadUnrouted(c, o, BoundedFacts{Facts: r, Timeout: req.Timeout}, conn, v), nil
	})
	return o
}

// readVhostWide reads what doctor asks of each readable vhost as a whole,
// not of one ladder. The delays outside ladders: a paged listing of every
// queue, since the management API cannot filter by arguments. The quorum
// queues under delayed retry, on a release that has it: found in that
// listing (ReadRetryListed), or, where it failed, by the sorted listings
// status reads (ReadRetry).
func (req DoctorRequest) readVhostWide(ctx context.Context, r DoctorReader, f *DoctorFacts) {
	v := f.Version()
	for i := range f.Vhosts {
		vh := &f.Vhosts[i]
		if vh.ReadErr != nil {
			continue
		}
		vh.DelaysRead = true
		vh.Delays, vh.DelaysErr = bounded(ctx, req.Timeout, func(c context.Context) (topology.Inventory, error) {
			inv, snap, err := Delays(c, r, vh.Vhost, vh.Found)
			vh.DelaySnap = snap
			return inv, err
		})
		listed := vh.DelaySnap.Queues
		vh.DelaySnap = vh.DelaySnap.Merge(vh.Report.Snapshot)
		if !v.QuorumDelayedRetry() {
			continue
		}
		vh.RetryRead = true
		vh.Retry, vh.RetryErr = bounded(ctx, req.Timeout, func(c context.Context) (health.RetryHold, error) {
			if vh.DelaysErr == nil {
				return ReadRetryListed(c, r, vh.Vhost, v, listed)
			}
			return ReadRetry(c, r, vh.Vhost, v)
		})
		vh.Report = vh.Report.WithRetry(vh.Retry)
	}
}

// sampleCeleryKeys reads the routing keys at the heads of the Celery
// ladders' rungs of one vhost (SampleKeys): through the front end's
// connection in its own vhost, through one opened for the purpose in
// another (AllVhosts), closed when the samples are read.
func (req DoctorRequest) sampleCeleryKeys(ctx context.Context, r DoctorReader, vh *DoctorVhost) []KeySample {
	var out []KeySample
	ladders := Ladders(vh.Found)
	var conn DoctorConn
	var connErr error
	for _, l := range KeySampled(vh.Found) {
		if conn == nil && connErr == nil {
			if vh.Vhost == req.Vhost {
				conn, connErr = req.Conn(ctx)
			} else if conn, connErr = req.Dial(ctx, vh.Vhost); connErr == nil {
				defer conn.Close()
			}
		}
		if connErr != nil {
			out = append(out, KeySample{Ladder: l.Name, Err: connErr})
			continue
		}
		s, _ := bounded(ctx, 2*req.Timeout, func(c context.Context) (KeySample, error) {
			return SampleKeys(c, r, conn, l, vh.Report.Snapshot, ladders), nil
		})
		out = append(out, s)
	}
	return out
}
