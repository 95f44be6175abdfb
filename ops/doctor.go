package ops

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// A finding's status, mildest first; the strings are doctor's JSON.
const (
	FindingOK      = "ok"
	FindingInfo    = "info"
	FindingWarn    = "warn"
	FindingProblem = "problem"
)

// Finding is one line of doctor's report.
type Finding struct {
	Area   string `json:"area"`   // broker, feature-flags, plugins, ladders, ladder NAME
	Status string `json:"status"` // FindingOK, FindingInfo, FindingWarn or FindingProblem
	Text   string `json:"text"`
}

// Findings are doctor's report in the order the checks made them.
type Findings []Finding

// Add appends one finding.
func (fs *Findings) Add(area, status, format string, a ...any) {
	*fs = append(*fs, Finding{area, status, fmt.Sprintf(format, a...)})
}

// Problems counts the findings that make doctor fail.
func (fs Findings) Problems() int {
	n := 0
	for _, f := range fs {
		if f.Status == FindingProblem {
			n++
		}
	}
	return n
}

// Exit is how doctor ends: an error exit when any finding is a problem,
// so a health check script fails on what doctor fails on.
func (fs Findings) Exit() int {
	if fs.Problems() > 0 {
		return ExitError
	}
	return ExitOK
}

// DoctorFacts are what doctor read from a broker, errors included. The
// checks judge these and nothing else, so that they run the same on
// recorded facts, and a front end other than the CLI can show them.
type DoctorFacts struct {
	API, User   string // the management API's URL and user
	Overview    broker.Overview
	OverviewErr error // when set, nothing below was read
	AMQPVhost   string
	AMQPErr     error
	Nodes       []broker.Node
	NodesErr    error
	Flags       map[string]bool // feature flag → enabled
	FlagsErr    error
	Only        string // --ladder: the one ladder asked about, "" for all
	Vhosts      []DoctorVhost
	// Target is the release an upgrade goes to (--target), zero for none:
	// the delay checks say what breaks there too.
	Target topology.Version
}

// DoctorVhost is what doctor read of one vhost's ladders.
type DoctorVhost struct {
	Vhost   string
	ReadErr error // the ladders could not be read: nothing below is set
	// Found are the ladders the first read found; Report is the last
	// reading, after watching for stalls (WatchErr, when a re-read failed).
	Found    []topology.Found
	Report   health.Report
	WatchErr error
	// Policies of a vhost that holds a quorum ladder (only quorum queues
	// have delayed retry).
	Policies    topology.Policies
	PoliciesErr error
	// Delays is the vhost's inventory of delays outside ladders and
	// DelaySnap what it was taken from, the ladders' reading merged in;
	// DelaysRead says it was taken (doctor without --ladder).
	Delays     topology.Inventory
	DelaySnap  topology.Snapshot
	DelaysErr  error
	DelaysRead bool
	// Retry is what RabbitMQ 4.3's delayed retry holds in the vhost's
	// quorum queues, and their settings; RetryRead says doctor read it
	// (from 4.3 only).
	Retry     health.RetryHold
	RetryErr  error
	RetryRead bool
	// KeySamples are the routing keys read at the heads of each Celery
	// ladder's rungs (SampleKeys).
	KeySamples []KeySample
}

// DoctorLadder is what a ladder's checks see: its report and the facts of
// its vhost and broker.
type DoctorLadder struct {
	health.LadderReport
	Snapshot    topology.Snapshot
	Policies    topology.Policies
	PoliciesErr error
	// Version is the release the API answered as; Rules the oldest node's,
	// whose quorum rules hold in a cluster mid-upgrade.
	Version, Rules topology.Version
}

// doctorChecks are doctor's sources of findings over the whole broker, in
// report order; ladderChecks are those run on every ladder found. A new
// source is a function in a file of its own and one entry here.
var (
	doctorChecks = []func(DoctorFacts, *Findings){
		checkConnections, checkPlugins, checkLaddersFound, checkQuorumRelease, checkDeadLetterPrefetch,
		checkFeatureFlags, checkBCCRelease, checkEachLadder, checkDelays, checkRetry, checkCeleryKeys,
	}
	ladderChecks = []func(DoctorLadder, *Findings){
		checkLadder, checkAtMostOnce, checkPlacement, checkDelayedRetry,
	}
)

// Judge judges what doctor read (ReadDoctor): the one home of its checks.
func Judge(f DoctorFacts) Findings {
	var out Findings
	if f.OverviewErr != nil {
		out.Add("broker", FindingProblem, "management API at %s does not answer: %v", f.API, f.OverviewErr)
		return out
	}
	for _, check := range doctorChecks {
		check(f, &out)
	}
	return out
}

// Version is the release the management API answered as.
func (f DoctorFacts) Version() topology.Version {
	v, _ := topology.ParseVersion(f.Overview.RabbitMQVersion)
	return v
}

// Rules is the oldest node's release: its quorum rules hold in a cluster
// mid-upgrade, since a queue may live there.
func (f DoctorFacts) Rules() topology.Version {
	rules := f.Version()
	for _, n := range f.Nodes {
		rules = topology.Oldest(rules, n.Version)
	}
	return rules
}

// found are the ladders of every vhost read.
func (f DoctorFacts) found() []topology.Found {
	var out []topology.Found
	for _, vh := range f.Vhosts {
		out = append(out, vh.Found...)
	}
	return out
}

func checkConnections(f DoctorFacts, out *Findings) {
	ov := f.Overview
	out.Add("broker", FindingOK, "management API at %s answers as %s: RabbitMQ %s, Erlang %s, node %s", f.API, f.User, ov.RabbitMQVersion, ov.ErlangVersion, ov.Node)
	if f.AMQPErr != nil {
		out.Add("broker", FindingProblem, "AMQP: %v", f.AMQPErr)
	} else {
		out.Add("broker", FindingOK, "AMQP accepts the credentials (vhost %s)", f.AMQPVhost)
	}
}

func checkPlugins(f DoctorFacts, out *Findings) {
	if f.NodesErr != nil {
		out.Add("plugins", FindingWarn, "cannot list the nodes' plugins: %v", f.NodesErr)
		return
	}
	for _, n := range f.Nodes {
		switch {
		case !n.Running:
			out.Add("broker", FindingProblem, "node %s is not running", n.Name)
		case slices.Contains(n.Plugins, "rabbitmq_management"):
			out.Add("plugins", FindingOK, "node %s runs %s", n.Name, strings.Join(n.Plugins, ", "))
		case n.Name == f.Overview.Node:
			// The node that answered this very API runs it, whatever
			// its (perhaps not yet collected) application list says.
			out.Add("plugins", FindingOK, "node %s serves this management API", n.Name)
		case len(n.Plugins) == 0:
			// A node lists its applications with its statistics, which
			// a freshly started node (seen on 4.0.5, ~30 s after boot)
			// has not collected yet: an empty list is not an answer.
			out.Add("plugins", FindingInfo, "node %s has not reported its plugins yet (its statistics start a few seconds after it boots); run doctor again to check them", n.Name)
		default:
			out.Add("plugins", FindingProblem, "node %s does not run rabbitmq_management", n.Name)
		}
	}
}

func checkLaddersFound(f DoctorFacts, out *Findings) {
	var names []string
	for _, vh := range f.Vhosts {
		names = append(names, vh.Vhost)
		if vh.ReadErr != nil {
			out.Add("ladders", FindingProblem, "cannot %v", vh.ReadErr)
		}
	}
	switch {
	case len(f.found()) > 0:
	case f.Only != "":
		out.Add("ladders", FindingProblem, "no ladder %q in vhost %s (rungs discover lists the ladders there)", f.Only, strings.Join(names, ", "))
	default:
		out.Add("ladders", FindingInfo, "no ladders in vhost %s", strings.Join(names, ", "))
	}
}

// Broker requirements of ladder features. Quorum queues arrived in 3.8;
// at-least-once dead-lettering (x-dead-letter-strategy, which every quorum
// ladder uses so that no message is lost between two rungs) in 3.10, and it
// needs the stream_queue feature flag besides quorum_queue (RabbitMQ's
// dead-lettering guide; NServiceBus' v2 delay infrastructure states the
// same two flags as its minimum).
var (
	minQuorum      = topology.Version{Major: 3, Minor: 8}
	minAtLeastOnce = topology.Version{Major: 3, Minor: 10}
)

// quorumLadder names the first quorum ladder found, "" when none is.
func (f DoctorFacts) quorumLadder() string {
	for _, fl := range f.found() {
		if fl.Ladder.QueueType == topology.Quorum {
			return fl.Ladder.Name
		}
	}
	return ""
}

func checkQuorumRelease(f DoctorFacts, out *Findings) {
	quorum, v, release := f.quorumLadder(), f.Version(), f.Overview.RabbitMQVersion
	switch {
	case quorum == "":
	case v.Known() && v.Less(minQuorum):
		out.Add("broker", FindingProblem, "ladder %s has quorum queues, which need RabbitMQ 3.8+; this is %s", quorum, release)
	case v.Known() && v.Less(minAtLeastOnce):
		out.Add("broker", FindingProblem, "ladder %s uses at-least-once dead-lettering, which needs RabbitMQ 3.10+; on %s a message can be lost between rungs", quorum, release)
	}
}

func checkFeatureFlags(f DoctorFacts, out *Findings) {
	quorum := f.quorumLadder()
	switch {
	case quorum == "" && f.FlagsErr == nil:
		out.Add("feature-flags", FindingOK, "no quorum ladder here; quorum_queue is %s, stream_queue is %s", onOff(f.Flags["quorum_queue"]), onOff(f.Flags["stream_queue"]))
	case f.FlagsErr != nil:
		status := FindingWarn
		if quorum != "" {
			status = FindingProblem
		}
		out.Add("feature-flags", status, "cannot read the feature flags (the user needs the administrator or monitoring tag): %v", f.FlagsErr)
	default:
		for _, ff := range []struct{ name, why string }{
			{"quorum_queue", "quorum queues"},
			{"stream_queue", "at-least-once dead-lettering between quorum rungs"},
		} {
			if f.Flags[ff.name] {
				out.Add("feature-flags", FindingOK, "%s is enabled (%s)", ff.name, ff.why)
			} else {
				out.Add("feature-flags", FindingProblem, "%s is not enabled; ladder %s needs it for %s (rabbitmqctl enable_feature_flag %s)", ff.name, quorum, ff.why, ff.name)
			}
		}
	}
}

func checkBCCRelease(f DoctorFacts, out *Findings) {
	if f.Version().LosesBCCOnDeadLetter() {
		out.Add("broker", FindingWarn, "%s; the other layouts are not affected", topology.BCCBrokenWhy(f.Overview.RabbitMQVersion))
	}
}

// checkEachLadder runs ladderChecks on every ladder of every vhost read.
func checkEachLadder(f DoctorFacts, out *Findings) {
	for _, vh := range f.Vhosts {
		if vh.ReadErr != nil {
			continue
		}
		if vh.WatchErr != nil {
			out.Add("ladders", FindingProblem, "cannot re-read vhost %s: %v", vh.Vhost, vh.WatchErr)
		}
		for _, lr := range vh.Report.Ladders {
			l := DoctorLadder{LadderReport: lr, Snapshot: vh.Report.Snapshot, Policies: vh.Policies, PoliciesErr: vh.PoliciesErr, Version: f.Version(), Rules: f.Rules()}
			for _, check := range ladderChecks {
				check(l, out)
			}
		}
	}
}

// LadderArea is doctor's area of one ladder's findings.
func LadderArea(l topology.Ladder) string {
	if l.Vhost != "/" {
		return "ladder " + l.Name + " (vhost " + l.Vhost + ")"
	}
	return "ladder " + l.Name
}

// checkLadder is one ladder's integrity: drift, layout safety on this
// release, then every queue the ladder view would mark as a warning or a
// problem, and the remedy for stalled rungs.
func checkLadder(lr DoctorLadder, out *Findings) {
	l, version := lr.Found.Ladder, lr.Version
	area := LadderArea(l)
	add := func(status, format string, a ...any) { out.Add(area, status, format, a...) }
	add(FindingInfo, "%s", l.Describe())
	if len(lr.Found.Drift) == 0 {
		add(FindingOK, "matches its plan: no missing, extra or changed objects")
	}
	for _, d := range lr.Found.Drift {
		add(FindingProblem, "drift: %s", d)
	}
	switch l.RiskOn(version) {
	case topology.LayoutBroken:
		add(FindingProblem, "this ladder routes by BCC keys, which this broker loses at every rung (upgrade to 3.13.3 or later)")
	case topology.LayoutLosesOnRetry:
		add(FindingWarn, "%s (after a node restart or a slow next rung); rungs replay --from %s.unroutable --to-origin puts them back into the rung they left (late, never early) (upgrade to 3.13.3 or later, or apply the ladder with --layout prefix or --queue-type classic)", topology.BCCRetryWhy(version, l.Name), l.Name)
	}
	if l.Layout == "nsb1" && version.AtLeast(3, 12, 0) {
		add(FindingInfo, "NServiceBus v1 declares lazy queues; RabbitMQ 3.12+ ignores x-queue-mode. v1 dead-letters at most once: NServiceBus' v2 (quorum) infrastructure does not lose messages between levels")
	}
	var stalled []string
	for _, r := range lr.Rows {
		if r.Missing || len(r.Drift) > 0 && r.Kind != health.RungRow {
			continue // reported as drift above
		}
		if r.StatusIsMembership() {
			continue // checkPlacement names them by node
		}
		if r.Stalled {
			stalled = append(stalled, r.Queue)
			add(FindingProblem, "%s is stalled: %s expired %s waiting to be dead-lettered, none moved on in %s",
				r.Queue, topology.FormatCount(r.Stats.Expired), topology.Plural(r.Stats.Expired, "message", "messages"),
				topology.FormatSpan(r.Waited.Truncate(time.Second)))
			continue
		}
		if r.Why.Cause == health.CauseLostRoute {
			// Said once for the ladder below, with its remedy.
			add(FindingProblem, "%s: %s", r.Queue, r.Status)
			continue
		}
		switch {
		case r.Severity == health.Problem && r.Kind == health.UnroutableRow:
			// A restart can dead-letter a rung's expired messages before
			// what follows it is up; they wait here, not lost.
			add(FindingProblem, "%s: %s; rungs replay --from %s --to-origin puts those that left a rung back into it (late, never early)", r.Queue, r.Status, r.Queue)
		case r.Severity == health.Problem:
			add(FindingProblem, "%s: %s", r.Queue, r.Status)
		case r.Severity == health.Warning:
			if len(r.Drift) == 0 {
				add(FindingWarn, "%s: %s", r.Queue, r.Status)
			}
		}
	}
	// A lost route is judged from evidence (health/cause.go): the route
	// it names, and the remedy that restores it. Not the broker's stall,
	// not unstall.
	for _, d := range lr.Lost {
		held := "messages held"
		if d.Held >= 0 {
			held = topology.Counted(d.Held, "message", "messages") + " held"
		}
		add(FindingProblem, "lost route to %s: %s for it; %s", topology.LostNames([]topology.LostRoute{d.LostRoute}), held, d.Evidence())
		then := health.HeldRetry(l)
		for _, t := range l.Terminals() {
			if t.Role == topology.RoleUnroutable {
				then = "once restored, rungs replay --from " + t.Queue + " --to-origin sends them on"
			}
		}
		add(FindingInfo, "remedy: %s; %s", health.LostRemedy([]health.LostDest{d}), then)
	}
	if len(stalled) > 0 {
		add(FindingInfo, "likely cause: %s", health.StallCause)
		add(FindingInfo, "remedy: %s", UnstallHint(l, stalled, version))
	}
	if lr.Totals.Attention() == 0 {
		add(FindingOK, "%s in flight, no rung stuck or stalled", topology.FormatCount(lr.Totals.InFlight))
	}
}

// checkPlacement is the ladder in a cluster: queues that lost a member,
// named by the node that is down (a majority still runs them; without one
// they move nothing), and leaders that all sit on one node, which makes
// the cluster add no drain capacity (docs/storms.md).
func checkPlacement(lr DoctorLadder, out *Findings) {
	area := LadderArea(lr.Found.Ladder)
	p := lr.Placement
	var noQuorum []string
	for _, r := range lr.Rows {
		if !r.Missing && !r.Stats.HasQuorum() {
			noQuorum = append(noQuorum, r.Queue)
		}
	}
	if len(noQuorum) > 0 {
		out.Add(area, FindingProblem, "%d %s without quorum (half their members or fewer online): %s; they take, deliver and dead-letter nothing until a majority of their nodes is back",
			len(noQuorum), plural(len(noQuorum), "queue", "queues"), nameSome(noQuorum, 5))
	}
	for _, n := range p.LostNodes() {
		qs := p.Lost[n]
		out.Add(area, FindingWarn, "%d %s lost %s member on %s: %s; each works while a majority of its members runs it",
			len(qs), plural(len(qs), "queue", "queues"), plural(len(qs), "its", "their"), n, nameSome(qs, 5))
	}
	if w := p.OneNodeWarning(lr.Found.Ladder.Vhost, lr.Found.Ladder.Name); w != "" {
		out.Add(area, FindingWarn, "%s", w)
	} else if p.Clustered() && len(p.Lost) == 0 {
		out.Add(area, FindingOK, "rungs run on %d nodes, every member online; leaders: %s", len(p.Nodes), p.Spread())
	}
}

func plural(n int, one, many string) string { return topology.Plural(int64(n), one, many) }

// checkDelayedRetry flags quorum delayed retry (RabbitMQ 4.3's
// x-delayed-retry-*, as arguments or policy keys) on a ladder's rungs: it
// holds a message handed back (by a peek, a move, a worker) beyond the
// rung's TTL. Rungs that one source configures alike are named together.
// Older releases accept the arguments and ignore them (and refuse the
// policy keys), so there it is said as a note for the upgrade; the oldest
// node's release decides.
func checkDelayedRetry(lr DoctorLadder, out *Findings) {
	l := lr.Found.Ladder
	if l.QueueType != topology.Quorum {
		return
	}
	area := LadderArea(l)
	add := func(status, format string, a ...any) { out.Add(area, status, format, a...) }
	if lr.PoliciesErr != nil {
		add(FindingInfo, "cannot read the policies, so delayed retry that a policy sets is not checked: %v", lr.PoliciesErr)
	} else if lr.Policies.OperatorUnread {
		add(FindingInfo, "cannot read the operator policies (the user needs the policymaker or administrator tag), so delayed retry that one sets is not checked")
	}
	for _, r := range lr.Rows {
		if r.Kind == health.RungRow && r.Stats.Delayed > 0 && len(r.Drift) > 0 {
			// checkLadder names a drifted row's drift, not its status.
			add(FindingWarn, "%s: %s", r.Queue, health.HeldPastTTL(r.Stats.Delayed))
		}
	}
	var sources []string
	rungs := map[string][]string{}
	hold := map[string]topology.DelayedRetry{}
	for _, r := range lr.Rows {
		q, ok := lr.Snapshot.Queue(r.Queue)
		if r.Kind != health.RungRow || !ok {
			continue
		}
		for _, d := range topology.DelayedRetries(q, lr.Policies) {
			k := d.String()
			if _, seen := rungs[k]; !seen {
				sources = append(sources, k)
				hold[k] = d
			}
			rungs[k] = append(rungs[k], r.Queue)
		}
	}
	for _, k := range sources {
		d, on := hold[k], nameSome(rungs[k], 3)
		wait := "at least " + topology.FormatSpan(d.Min)
		if d.Max > 0 {
			wait = topology.FormatSpan(d.Min) + " to " + topology.FormatSpan(d.Max)
		}
		if lr.Rules.QuorumDelayedRetry() {
			add(FindingWarn, "delayed retry on %s, set by the %s: a message handed back (a peek, a move) waits %s beyond the rung's TTL before it moves on", on, k, wait)
			continue
		}
		add(FindingInfo, "delayed retry on %s, set by the %s: RabbitMQ %s ignores it; from 4.3 a message handed back would wait %s beyond the rung's TTL", on, k, lr.Rules, wait)
	}
}

// nameSome names up to n of xs and counts the rest.
func nameSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

func onOff(b bool) string {
	if b {
		return "enabled"
	}
	return "disabled"
}
