package health

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// RowKind says what a queue is to the ladder it is shown with.
type RowKind int

// Kinds of rows, in the order the ladder view lists them.
const (
	RungRow       RowKind = iota // a delay queue
	TargetRow                    // a destination: the ladder's done queue or an application's queue
	UnroutableRow                // where messages nobody routes are kept
	DeadLetterRow                // where a destination dead-letters to
	ExtraRow                     // named like the ladder's queues but not in its plan
)

// Section is the heading the ladder view puts above rows of this kind.
func (k RowKind) Section() string {
	switch k {
	case TargetRow:
		return "targets"
	case UnroutableRow:
		return "unroutable"
	case DeadLetterRow:
		return "dead letters"
	case ExtraRow:
		return "not in plan"
	}
	return "rungs"
}

// Severity ranks a row's status.
type Severity int

// Severities, mildest first.
const (
	Fine Severity = iota
	Notice
	Warning
	Problem
)

// Row is one queue of a ladder as rungs judges it: a rung or a queue
// around it, with the live figures and everything worth warning about.
type Row struct {
	Kind  RowKind
	Level int
	Digit int
	Queue string
	TTL   time.Duration // rungs only
	// DeadLetter is the exchange the queue dead-letters into, if any.
	DeadLetter string
	Stats      topology.QueueStats
	// Missing is set for a queue in the plan that the broker does not have.
	Missing bool
	// Drift lists the differences that name this queue.
	Drift []topology.Drift
	// Status explains the row's worst problem in a sentence, Tag in a word
	// or two (for the STATUS column); Severity ranks it.
	Status   string
	Tag      string
	Severity Severity
	// Stuck is set when a rule found the rung stuck (see Stuck), whether
	// or not that is the status shown.
	Stuck bool
	// Stalled is set when the rung's expired messages wait to be
	// dead-lettered and do not drain (see Stalled); Waited is how long
	// their count has not fallen. A stalled rung is never also Stuck:
	// Stuck means not draining for another reason.
	Stalled bool
	Waited  time.Duration
	// Why is the verdict on a row whose messages are not leaving: its
	// cause, evidence and remedy (see cause.go). A rung held by a lost
	// route is Stuck, never Stalled: unstall does not cure it.
	Why Judgement
	// Backlogged is set when the rung's expired messages wait longer than
	// a refresh to be dead-lettered while messages do leave it: a storm
	// the ladder is draining, never a stall (see drain.go).
	Backlogged bool
	// InRate and OutRate are messages a second into and out of the queue:
	// what the readings showed over their span (Flows.Rates: dead-lettered
	// messages included, which the management API's rates leave out), or
	// the management API's rates where those are higher; a destination's,
	// where the readings show it moving, its DestFlow.
	InRate, OutRate float64
	// Hop is where the active trace waits in this rung; End marks the
	// queue the traced message ends in.
	Hop *topology.Hop
	End bool
	// EndAt is when, after publishing, the traced message reaches End.
	EndAt time.Duration
	// Visited marks a queue a traced message has left (its x-death).
	Visited bool
	// membersTag is the tag lostMembers raised, "" if none.
	membersTag string
}

// StatusIsMembership reports whether the row's status is its lost
// members (lostMembers), which doctor reports per node instead.
func (r Row) StatusIsMembership() bool { return r.membersTag != "" && r.Tag == r.membersTag }

// Tags of an unroutable queue holding messages (unroutedMessages).
const (
	TagUnroutable = "unroutable"
	TagLostRoute  = "lost route"
)

// StatusIsUnrouted reports whether the row's status is the messages its
// unroutable queue holds (unroutedMessages), which the totals count as
// Unroutable (and LostRoute) and every summary says as such.
func (r Row) StatusIsUnrouted() bool {
	return r.Kind == UnroutableRow && (r.Tag == TagUnroutable || r.Tag == TagLostRoute)
}

// raise records a finding; the first finding of the highest severity
// becomes the row's status.
func (r *Row) raise(sev Severity, tag, status string) {
	if sev > r.Severity || r.Status == "" {
		r.Severity, r.Tag, r.Status = sev, tag, status
	}
}

// Watch supplies what a single snapshot cannot: how long each queue's
// depth has stood still, which only a caller watching over time knows. The
// zero Watch knows no history.
type Watch struct {
	// Still returns how long a queue's depth has not moved; nil means unknown.
	Still func(queue string) time.Duration
	// Interval is the refresh interval, the slack allowed for stale statistics.
	Interval time.Duration
	// Waited returns how long a queue's expired messages have waited to be
	// dead-lettered without their count falling (Waits.Waited); nil means
	// unknown, and then no rung reads as stalled.
	Waited func(queue string) time.Duration
	// Flows are the depths read over time and Now the moment judged: with
	// them a rung whose messages leave is never stalled, however its
	// expired count grows. The zero Flows knows no history.
	Flows Flows
	Now   time.Time
	// Unrouted counts, by queue, the messages read there by the
	// destination their routing key names: a destination whose binding
	// went with its queue is known only from them. The queues are
	// unroutable queues, and the rungs of a ladder whose lost route no
	// binding names, sampled of their ready messages (ops.ReadUnrouted).
	// nil: not read.
	Unrouted map[string]map[string]int64
	// Bound are, by ladder name, the destinations an earlier snapshot of
	// the same session saw bound to the ladder: a route lost while rungs
	// watched is named by what it last saw. nil: none remembered.
	Bound map[string][]string
}

func (w Watch) still(q string) time.Duration {
	if w.Still == nil {
		return 0
	}
	return w.Still(q)
}

func (w Watch) waited(q string) time.Duration {
	if w.Waited == nil {
		return 0
	}
	return w.Waited(q)
}

// LadderRows lists a ladder's queues as the ladder view shows them: rungs
// highest first, then targets, the unroutable queue, dead-letter queues and
// leftover queues named like the ladder's. snap supplies declarations and
// live statistics; a planned queue it lacks is a Missing row, not a gap.
func LadderRows(f topology.Found, snap topology.Snapshot, w Watch) []Row {
	l := f.Ladder
	drift := map[string][]topology.Drift{}
	for _, d := range f.Drift {
		if d.Object == "queue" {
			drift[d.Name] = append(drift[d.Name], d)
		}
	}
	listed := map[string]bool{}
	ages := MaxAge(l)
	drain := w.Flows.ladderDrain(l, nil)
	feeds := ladderFeeds{rungs: l.Rungs(), ends: ladderEnds(l)}
	lost := lostRoutes(l, snap, w)
	var rows []Row
	add := func(r Row) {
		if listed[r.Queue] {
			return
		}
		listed[r.Queue] = true
		q, ok := snap.Queue(r.Queue)
		r.Missing = !ok
		if ok {
			r.Stats = q.Stats
			if dlx, has := q.DeadLetterExchange(); has && r.DeadLetter == "" {
				r.DeadLetter = dlx
			}
		}
		r.Drift = drift[r.Queue]
		in, out := w.Flows.Rates(r.Queue)
		r.InRate, r.OutRate = max(in, r.Stats.PublishRate), max(out, r.Stats.OutRate())
		// A depth that rises while consumers take shows no leave: a
		// destination's row gives its flow (what arrived, what consumers
		// took for good), the figures its line under the drain says;
		// the broker's delivery rate counts redeliveries too.
		if d, ok := w.Flows.Dest(r.Queue); ok && r.Kind == TargetRow {
			r.InRate, r.OutRate = d.In, d.Taken
		}
		judge(&r, facts{maxAge: ages[r.Level], watch: w, drain: drain, feeds: feeds, lost: lost, ladder: l})
		rows = append(rows, r)
	}
	for _, r := range l.Rungs() {
		add(Row{Kind: RungRow, Level: r.Level, Digit: r.Digit, Queue: r.Queue, TTL: r.TTL, DeadLetter: r.DeadLetter})
	}
	var targets, unroutable []string
	for _, t := range l.Terminals() {
		switch t.Role {
		case topology.RoleDone:
			targets = append(targets, t.Queue)
		case topology.RoleUnroutable:
			unroutable = append(unroutable, t.Queue)
		}
	}
	targets = append(targets, l.Targets...)
	for _, q := range targets {
		add(Row{Kind: TargetRow, Queue: q})
	}
	for _, q := range unroutable {
		add(Row{Kind: UnroutableRow, Queue: q})
	}
	for _, q := range deadLetterQueues(snap, targets) {
		add(Row{Kind: DeadLetterRow, Queue: q})
	}
	for _, d := range f.Drift {
		if d.Object == "queue" && d.Kind == topology.Extra {
			add(Row{Kind: ExtraRow, Queue: d.Name})
		}
	}
	return rows
}

// facts is what a rule may consult beyond the row itself.
type facts struct {
	// maxAge is MaxAge for the row's level.
	maxAge time.Duration
	watch  Watch
	// drain is the ladder's measured capacity (no hops or backlog yet).
	drain Drain
	// feeds is where the ladder's messages can go (fedFrom).
	feeds ladderFeeds
	// lost are the ladder's destinations whose route reaches no queue.
	lost []topology.LostRoute
	// ladder is the ladder judged, for a remedy that names it.
	ladder topology.Ladder
}

// A rule looks at one row and raises what it finds (r.raise). Every rule
// sees every row that exists on the broker, so a rule checks the row's
// kind itself. Rules run in this order, and among findings of equal
// severity the first one raised is the status shown: to add a rule, write
// it below and put it in this list.
var rules = []func(r *Row, f facts){
	notInPlan,
	drifted,
	stalledRung,
	backloggedRung,
	expiredWaiting,
	stuckRung,
	consumedRung,
	delayedRetry,
	lostMembers,
	unroutedMessages,
	waitingWithoutConsumers,
}

// judge sets a row's status: the single most useful thing to say about it.
// A queue the broker lacks has nothing else worth saying.
func judge(r *Row, f facts) {
	if r.Missing {
		r.raise(Problem, "missing", "missing on the broker")
		return
	}
	for _, rule := range rules {
		rule(r, f)
	}
}

func notInPlan(r *Row, _ facts) {
	if r.Kind == ExtraRow {
		r.raise(Warning, "not in plan", "named like the ladder's queues but not in its plan")
	}
}

// drifted reports the first difference from the plan; a queue not in the
// plan at all has already said so.
func drifted(r *Row, _ facts) {
	if r.Kind != ExtraRow && len(r.Drift) > 0 {
		r.raise(Warning, "drift", "differs from plan: "+r.Drift[0].Detail)
	}
}

// stalledRung comes before stuckRung: a stalled rung's depth stands still
// too, and "stalled" names the cause and the cure. A rung held so while a
// destination of its ladder has lost its route is held by the lost route,
// not stalled (cause.go): the broker's stall only where routes resolve.
func stalledRung(r *Row, f facts) {
	if r.Kind != RungRow {
		return
	}
	waited := f.watch.waited(r.Queue)
	s := Stalled(r.Stats, r.TTL, waited, f.watch.Interval)
	if s == "" {
		return
	}
	n := r.Stats.Expired
	// With a route lost, what leaves the rung (the messages for the
	// destinations still routed) does not move the held ones: an expired
	// count that has not fallen for the window is the lost route's.
	if len(f.lost) > 0 {
		r.Stuck, r.Waited = true, waited
		r.Why = lostRungJudgement(n, f.lost)
		r.Why.Remedy += "; " + HeldRetry(f.ladder)
		r.raise(Problem, "lost route "+topology.FormatCount(n), lostRungStatus(n, f.lost))
		return
	}
	if f.leaving(r, waited) || f.fedFrom(r) {
		return
	}
	r.Stalled, r.Waited = true, waited
	r.Why = Judgement{Cause: CauseBrokerStall, Held: n,
		Evidence: fmt.Sprintf("%s expired, not dead-lettered in %s, while every route of the ladder resolves: %s",
			topology.FormatCount(n), topology.FormatSpan(waited.Truncate(time.Second)), StallCause),
		Remedy: StallRemedy}
	r.raise(Problem, "stalled "+topology.FormatCount(n), s)
}

// expiredWaiting says that expired messages wait to be dead-lettered
// while it is too soon to call the rung stalled: a busy healthy quorum
// rung shows a few now and then.
func expiredWaiting(r *Row, _ facts) {
	if r.Kind == RungRow && !r.Stalled && !r.Backlogged && r.Stats.Expired > 0 {
		n := r.Stats.Expired
		r.raise(Notice, topology.FormatCount(n)+" expired", fmt.Sprintf("%s expired %s waiting to be dead-lettered", topology.FormatCount(n), topology.Plural(n, "message", "messages")))
	}
}

func stuckRung(r *Row, f facts) {
	if r.Kind != RungRow || r.Stalled {
		return
	}
	s := Stuck(r.Stats, r.TTL, f.maxAge, f.watch.still(r.Queue), f.watch.Interval)
	if s == "" {
		return
	}
	r.Stuck = true
	tag := "stuck"
	if r.Stats.HeadAge > 0 {
		tag = "stuck " + topology.FormatAge(r.Stats.HeadAge)
	}
	r.raise(Problem, tag, s)
}

// consumedRung: a consumer on a delay queue takes messages before their
// TTL runs out, so they are not delayed at all.
func consumedRung(r *Row, _ facts) {
	if r.Kind == RungRow && r.Stats.Consumers > 0 {
		n := r.Stats.Consumers
		r.raise(Warning, "consumed", fmt.Sprintf("%d %s on a delay queue: messages are taken, not delayed", n, topology.Plural(n, "consumer", "consumers")))
	}
}

// delayedRetry: RabbitMQ 4.3's quorum delayed retry holds a returned
// message back before it is ready again. On a rung that hold comes on top
// of the TTL (measured on 4.3.6: a 1s rung with a 3s minimum dead-lettered
// a peeked message at 3.1s), so those messages arrive late. On a target
// it is the application's own retry, worth a word only.
func delayedRetry(r *Row, _ facts) {
	n := r.Stats.Delayed
	if n <= 0 {
		return
	}
	tag := topology.FormatCount(n) + " delayed"
	switch r.Kind {
	case RungRow:
		r.raise(Warning, tag, HeldPastTTL(n))
	case TargetRow, DeadLetterRow:
		r.raise(Notice, tag, fmt.Sprintf("%s returned %s held back by delayed retry", topology.FormatCount(n), topology.Plural(n, "message", "messages")))
	}
}

// lostMembers: a quorum queue with members offline still works while a
// majority runs it, one node short of stopping; without a majority it
// accepts, delivers and dead-letters nothing. Any row: a target or the
// unroutable queue that lost its quorum loses messages too.
func lostMembers(r *Row, _ facts) {
	lost := r.Stats.LostMembers()
	if len(lost) == 0 {
		return
	}
	n, online := len(r.Stats.Members), len(r.Stats.Members)-len(lost)
	if !r.Stats.HasQuorum() {
		r.membersTag = "no quorum"
		r.raise(Problem, r.membersTag, fmt.Sprintf("no quorum: %d of %d members online (%s down); it takes, delivers and dead-letters nothing until a majority is back",
			online, n, strings.Join(lost, ", ")))
		return
	}
	spare := online - (n/2 + 1) // losses it survives still
	margin := "one more loss stops it"
	if spare > 0 {
		margin = fmt.Sprintf("it survives %d more %s", spare, topology.Plural(int64(spare), "loss", "losses"))
	}
	r.membersTag = fmt.Sprintf("%d of %d members", online, n)
	r.raise(Warning, r.membersTag, fmt.Sprintf("%s down: %d of %d members online; %s",
		strings.Join(lost, ", "), online, n, margin))
}

// HeldPastTTL says that a delayed retry holds n of a rung's messages.
func HeldPastTTL(n int64) string {
	return fmt.Sprintf("%s %s held by delayed retry beyond the rung's TTL", topology.FormatCount(n), topology.Plural(n, "message", "messages"))
}

func unroutedMessages(r *Row, f facts) {
	if r.Kind != UnroutableRow {
		return
	}
	n := r.Stats.Messages()
	if n <= 0 {
		return
	}
	if len(f.lost) == 0 {
		r.raise(Problem, TagUnroutable, fmt.Sprintf("%s %s that no binding routed", topology.FormatCount(n), topology.Plural(n, "message", "messages")))
		return
	}
	// The messages held for the lost destinations: by the keys read
	// from the queue where read, else all of them for a sole one.
	r.Why = lostJudgement(n, f.lost)
	if read := f.watch.Unrouted[r.Queue]; read != nil {
		r.Why.Held = 0
		for i := range r.Why.Lost {
			r.Why.Lost[i].Held = read[r.Why.Lost[i].Dest]
			r.Why.Held += r.Why.Lost[i].Held
		}
	}
	r.Why.Remedy += "; once restored, rungs replay --from " + r.Queue + " --to-origin sends them on"
	what := make([]string, len(r.Why.Lost))
	for i, d := range r.Why.Lost {
		what[i] = d.Evidence()
	}
	r.raise(Problem, TagLostRoute, fmt.Sprintf("%s of %s unroutable %s meant for %s (%s)",
		topology.FormatCount(r.Why.Held), topology.FormatCount(n), topology.Plural(n, "message", "messages"),
		topology.LostNames(f.lost), strings.Join(what, "; ")))
}

func waitingWithoutConsumers(r *Row, _ facts) {
	if (r.Kind == TargetRow || r.Kind == DeadLetterRow) && r.Stats.Ready > 0 && r.Stats.Consumers == 0 {
		r.raise(Notice, "no consumers", "no consumers: messages wait here")
	}
}

// deadLetterQueues finds the queues that the given queues dead-letter to,
// by following x-dead-letter-exchange through the snapshot's bindings, and
// the parking queues of the retry library, which parks by publishing (not
// by dead-lettering) into QUEUE.parked unless told otherwise.
func deadLetterQueues(snap topology.Snapshot, from []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, name := range from {
		if _, ok := snap.Queue(name + ".parked"); ok && !seen[name+".parked"] {
			seen[name+".parked"] = true
			out = append(out, name+".parked")
		}
		q, ok := snap.Queue(name)
		if !ok {
			continue
		}
		dlx, ok := q.DeadLetterExchange()
		if !ok {
			continue
		}
		if dlx == "" {
			// The default exchange routes by queue name.
			if rk, _ := q.Args["x-dead-letter-routing-key"].(string); rk != "" && !seen[rk] {
				if _, ok := snap.Queue(rk); ok {
					seen[rk] = true
					out = append(out, rk)
				}
			}
			continue
		}
		for _, b := range snap.Bindings {
			if b.Source == dlx && b.DestinationType == topology.ToQueue && !seen[b.Destination] {
				seen[b.Destination] = true
				out = append(out, b.Destination)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ApplyTrace marks the rows a traced message passes through.
func ApplyTrace(rows []Row, tr *topology.Trace) []Row {
	out := make([]Row, len(rows))
	copy(out, rows)
	for i := range out {
		out[i].Hop, out[i].End, out[i].EndAt = nil, false, 0
	}
	if tr == nil {
		return out
	}
	for _, h := range tr.Hops {
		for i := range out {
			if out[i].Kind == RungRow && out[i].Queue == h.Queue {
				hop := h
				out[i].Hop = &hop
			}
		}
	}
	for i := range out {
		if out[i].Queue == tr.Target {
			out[i].End, out[i].EndAt = true, tr.Total()
		}
	}
	return out
}

// MarkVisited marks the rows of the queues a traced message has left, as
// its x-death lists them.
func MarkVisited(rows []Row, hops []topology.DeathHop) []Row {
	out := make([]Row, len(rows))
	copy(out, rows)
	been := map[string]bool{}
	for _, h := range hops {
		been[h.Queue] = true
	}
	for i := range out {
		out[i].Visited = been[out[i].Queue]
	}
	return out
}

// FoldIdleRungs drops the rungs with nothing to show: empty, no traffic, no
// warning and not on the trace. A radix-16 ladder has 15 rungs a level, and
// most are empty at any moment; listing them all would bury the few that
// hold messages. keep names a queue that stays regardless (the cursor's), so
// the selection does not jump when its rung drains. It returns the rows
// kept and how many rungs it folded.
func FoldIdleRungs(rows []Row, keep string) ([]Row, int) {
	out := make([]Row, 0, len(rows))
	folded := 0
	for _, r := range rows {
		if r.Kind == RungRow && r.Queue != keep && idle(r) {
			folded++
			continue
		}
		out = append(out, r)
	}
	return out, folded
}

// StatusRows are the rows a one-off report (rungs status) lists: the
// ladder's rows with the idle rungs of a ladder above radix 2 folded away
// unless all. It returns how many it folded.
func StatusRows(lr LadderReport, all bool) ([]Row, int) {
	if all || lr.Found.Ladder.Radix <= 2 {
		return lr.Rows, 0
	}
	return FoldIdleRungs(lr.Rows, "")
}

func idle(r Row) bool {
	s := r.Stats
	// Messages() counts expired ones waiting to be dead-lettered and ones
	// a delayed retry holds too: a rung holding messages in any state is
	// never folded away.
	// A member lost, with quorum kept, is said once for the ladder (a node
	// down touches every queue); it does not keep an empty rung listed.
	quiet := r.Severity == Fine || r.StatusIsMembership() && r.Severity < Problem
	return !r.Missing && quiet && r.Hop == nil && !r.End && !r.Visited &&
		s.Messages() == 0 && s.PublishRate == 0 && s.OutRate() == 0
}

// FilterRows keeps the rows whose queue name contains every word of filter
// (case-insensitive).
func FilterRows(rows []Row, filter string) []Row {
	return filterWords(rows, filter, func(r Row) string { return r.Queue })
}

// filterWords keeps the xs whose text contains every word of filter,
// ignoring case; all of them when filter has no words.
func filterWords[T any](xs []T, filter string, text func(T) string) []T {
	words := strings.Fields(strings.ToLower(filter))
	if len(words) == 0 {
		return xs
	}
	var out []T
	for _, x := range xs {
		if matchAll(strings.ToLower(text(x)), words) {
			out = append(out, x)
		}
	}
	return out
}

func matchAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
