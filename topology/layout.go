package topology

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultLayout is the layout new ladders get, except where the broker's
// version would lose its BCC keys (Version.NewLadderLayout).
const DefaultLayout = "direct"

// Layout shapes a ladder: names, arguments, bindings and routing keys. Each
// known ladder family (rungs' own prefix ladder, the seed's Terraform suffix
// ladder, NServiceBus' delay infrastructure) is one implementation.
type Layout interface {
	// Name is the layout's flag value.
	Name() string
	// Describe is one line for help texts.
	Describe() string
	// normalize applies the layout's fixed parameters and constraints.
	normalize(l Ladder) (Ladder, error)
	// Plan lists every object the ladder needs, in declaration order.
	Plan(l Ladder) Plan
	// Rungs lists the delay queues, highest level (longest TTL) first.
	Rungs(l Ladder) []Rung
	// Entry is the exchange a message with this many units is published to.
	Entry(l Ladder, units uint64) string
	// Key spells units and an optional destination as a routing key.
	Key(l Ladder, units uint64, dest string) (string, error)
	// Decode reads a routing key back into units and destination.
	Decode(l Ladder, key string) (units uint64, dest string, err error)
	// Target is the queue a message for dest ends in ("" is the default).
	Target(l Ladder, dest string) (string, error)
	// Terminals are the ladder's own queues that are not rungs: where
	// messages end (done) or land when nothing routes them (unroutable).
	Terminals(l Ladder) []Terminal
	// Owns reports whether an object name belongs to this ladder, so that a
	// left-over rung shows up as drift instead of being ignored.
	Owns(l Ladder, name string) bool
	// IsTargetBinding reports whether a binding connects a destination
	// queue (not drift: destinations come and go with their workers).
	IsTargetBinding(l Ladder, b Binding) (dest string, ok bool)
	// Discover finds the ladders of this layout in a snapshot.
	Discover(s Snapshot) []Ladder
	// namePattern is a regular expression matching every name Owns
	// accepts for a ladder whose name matches the expression name (see
	// Scope): a broker filters its listings by it.
	namePattern(name string) string
	// anyName matches the names of every ladder of the layout, for
	// discovery.
	anyName() string
}

// Rung is one delay queue.
type Rung struct {
	Level int // digit position, 0 is the least significant
	Digit int // digit value this queue stands for (1 for binary ladders)
	Queue string
	TTL   time.Duration
	// DeadLetter is the exchange the queue dead-letters into.
	DeadLetter string
}

// Terminal roles.
const (
	RoleDone       = "done"
	RoleUnroutable = "unroutable"
)

// Terminal is a ladder queue that holds messages rather than delaying them.
type Terminal struct {
	Role  string
	Queue string
}

// Layouts returns every layout rungs knows, the default first.
func Layouts() []Layout {
	// direct comes last so that the layouts' indexes in FuzzDiscover's corpus
	// keep their meaning.
	return []Layout{prefixLayout{}, suffixLayout{}, nsbLayout{}, nsbLayout{v1: true}, celeryLayout{}, directLayout{}}
}

// LayoutNames lists the layouts' names, for flags and errors.
func LayoutNames() []string {
	var names []string
	for _, l := range Layouts() {
		names = append(names, l.Name())
	}
	return names
}

// LayoutByName finds a layout by its flag value.
func LayoutByName(name string) (Layout, error) {
	for _, l := range Layouts() {
		if l.Name() == name {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown layout %q (want one of %s)", ErrInvalidLadder, name, strings.Join(LayoutNames(), ", "))
}

// layout returns the ladder's layout. An empty name is the default, as
// Normalize reads it; an unknown name is a layout that plans nothing and
// makes every routing key an error, rather than a ladder of another layout
// nobody asked for. A ladder that passed Normalize always has a known one.
func (l Ladder) layout() Layout {
	name := l.Layout
	if name == "" {
		name = DefaultLayout
	}
	lay, err := LayoutByName(name)
	if err != nil {
		return unknownLayout{name: l.Layout, err: err}
	}
	return lay
}

// unknownLayout stands for a layout name rungs does not know.
type unknownLayout struct {
	name string
	err  error
}

func (u unknownLayout) Name() string                                   { return u.name }
func (u unknownLayout) Describe() string                               { return "unknown layout" }
func (u unknownLayout) normalize(Ladder) (Ladder, error)               { return Ladder{}, u.err }
func (u unknownLayout) Plan(l Ladder) Plan                             { return Plan{Ladder: l} }
func (u unknownLayout) Rungs(Ladder) []Rung                            { return nil }
func (u unknownLayout) Entry(Ladder, uint64) string                    { return "" }
func (u unknownLayout) Terminals(Ladder) []Terminal                    { return nil }
func (u unknownLayout) Owns(Ladder, string) bool                       { return false }
func (u unknownLayout) IsTargetBinding(Ladder, Binding) (string, bool) { return "", false }
func (u unknownLayout) Discover(Snapshot) []Ladder                     { return nil }
func (u unknownLayout) namePattern(string) string                      { return "" }
func (u unknownLayout) anyName() string                                { return "" }
func (u unknownLayout) Key(Ladder, uint64, string) (string, error)     { return "", u.err }
func (u unknownLayout) Decode(Ladder, string) (uint64, string, error)  { return 0, "", u.err }
func (u unknownLayout) Target(Ladder, string) (string, error)          { return "", u.err }

// Plan lists every object of the ladder.
func (l Ladder) Plan() Plan { return l.layout().Plan(l) }

// Rungs lists the ladder's delay queues, highest first.
func (l Ladder) Rungs() []Rung { return l.layout().Rungs(l) }

// Terminals lists the ladder's done and unroutable queues.
func (l Ladder) Terminals() []Terminal { return l.layout().Terminals(l) }

// Key is the routing key for a delay and an optional destination.
func (l Ladder) Key(d time.Duration, dest string) (string, error) {
	u, err := l.Units(d)
	if err != nil {
		return "", err
	}
	return l.layout().Key(l, u, dest)
}

// Entry is the exchange a message of delay d is published to.
func (l Ladder) Entry(d time.Duration) (string, error) {
	u, err := l.Units(d)
	if err != nil {
		return "", err
	}
	lay := l.layout()
	if u, ok := lay.(unknownLayout); ok {
		return "", u.err
	}
	return lay.Entry(l, u), nil
}

// Decode reads a routing key back into a delay and a destination.
func (l Ladder) Decode(key string) (time.Duration, string, error) {
	u, dest, err := l.layout().Decode(l, key)
	if err != nil {
		return 0, "", err
	}
	if dest != "" {
		// A key can name a destination no key may be made for ("#"):
		// refuse it as Key would, not trace it.
		if err := checkDest(dest); err != nil {
			return 0, "", fmt.Errorf("%w: %q: %v", ErrBadKey, key, err)
		}
	}
	return time.Duration(u) * l.Unit, dest, nil
}

// digitWord spells one digit as a topic word.
func digitWord(d int) string { return strconv.FormatInt(int64(d), 16) }

// parseDigit reads a digit word in the given radix.
func parseDigit(w string, radix int) (int, bool) {
	if len(w) != 1 {
		return 0, false
	}
	v, err := strconv.ParseInt(w, 16, 8)
	if err != nil || int(v) >= radix {
		return 0, false
	}
	return int(v), true
}

// digitKey spells units as Levels digit words, most significant first.
func digitKey(l Ladder, units uint64) []string {
	ds := l.Digits(units)
	words := make([]string, len(ds))
	for i, d := range ds {
		words[i] = digitWord(d)
	}
	return words
}

// readDigits parses n digit words into units.
func readDigits(words []string, radix int) (uint64, bool) {
	var u uint64
	for _, w := range words {
		d, ok := parseDigit(w, radix)
		if !ok {
			return 0, false
		}
		u = u*uint64(radix) + uint64(d)
	}
	return u, true
}

// joinKey joins digit words and destination, checking AMQP's length limit.
func joinKey(words []string, dest string) (string, error) {
	key := strings.Join(words, ".")
	if dest != "" {
		if err := checkDest(dest); err != nil {
			return "", err
		}
		key += "." + dest
	}
	if len(key) > MaxKeyBytes {
		return "", fmt.Errorf("%w: %d bytes for destination %q", ErrKeyTooLong, len(key), dest)
	}
	return key, nil
}

// repeat returns n copies of w.
func repeat(w string, n int) []string {
	out := make([]string, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, w)
	}
	return out
}

// pattern joins binding-key parts.
func pattern(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return strings.Join(all, ".")
}

// ttlMillis is x-message-ttl for a duration.
func ttlMillis(d time.Duration) int64 { return int64(d / time.Millisecond) }

// LegacyQueueArg reports whether a queue argument the broker has and the
// plan lacks is one an earlier rungs declared and this one dropped: the
// at-least-once strategy on a queue with no dead-letter exchange, which
// changes nothing there. Diff does not count it as drift, and apply keeps
// it, because the broker refuses to re-declare a queue without an
// argument it was declared with.
func LegacyQueueArg(want, got Args, key string) bool {
	_, wantDLX := want["x-dead-letter-exchange"]
	_, gotDLX := got["x-dead-letter-exchange"]
	_, planned := want[key]
	return key == "x-dead-letter-strategy" && !planned && !wantDLX && !gotDLX && got[key] == "at-least-once"
}

// WithLegacyArgs returns the queue's arguments as the plan declares them,
// adjusted to what the broker's queue got has where the difference is not
// drift: a legacy argument (LegacyQueueArg) it has is added, and the "no
// delivery limit" of ForRelease (releaseQueueArg) is taken as the queue
// has it, present or not.
func WithLegacyArgs(want, got Args) Args {
	var out Args
	edit := func() {
		if out == nil {
			out = Args{}
			for wk, wv := range want {
				out[wk] = wv
			}
		}
	}
	for k, v := range got {
		if LegacyQueueArg(want, got, k) || releaseQueueArg(want, got, k) {
			edit()
			out[k] = v
		}
	}
	for k := range releaseArgs {
		if _, ok := got[k]; !ok && releaseQueueArg(want, got, k) {
			edit()
			delete(out, k)
		}
	}
	if out == nil {
		return want
	}
	return out
}

// sortedLadders orders discovery results by vhost and name.
func sortedLadders(ls []Ladder) []Ladder {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Vhost != ls[j].Vhost {
			return ls[i].Vhost < ls[j].Vhost
		}
		if ls[i].Name != ls[j].Name {
			return ls[i].Name < ls[j].Name
		}
		return ls[i].Layout < ls[j].Layout
	})
	return ls
}

// rungFit collects the rungs found for one ladder during discovery and infers
// the unit and radix from their TTLs.
type rungFit struct {
	level, digit int
	ttl          time.Duration
}

// inferUnit finds the unit that explains the most rungs' TTLs as
// digit·radix^level·unit. A rung whose TTL was changed by hand must not hide
// the whole ladder: it is outvoted here and shows up as drift. Ties go to the
// unit the lowest rung implies. ok is false when no rung implies a unit.
func inferUnit(rs []rungFit, radix int) (time.Duration, bool) {
	votes := map[time.Duration]int{}
	lowest := map[time.Duration]int{}
	for _, r := range rs {
		div := time.Duration(r.digit)
		for i := 0; i < r.level; i++ {
			div *= time.Duration(radix)
		}
		if div == 0 || r.ttl%div != 0 || r.ttl/div%time.Millisecond != 0 {
			continue
		}
		u := r.ttl / div
		if u <= 0 {
			continue
		}
		if _, seen := votes[u]; !seen || r.level < lowest[u] {
			lowest[u] = r.level
		}
		votes[u]++
	}
	var best time.Duration
	for u, n := range votes {
		if best == 0 || n > votes[best] || n == votes[best] && (lowest[u] < lowest[best] || lowest[u] == lowest[best] && u < best) {
			best = u
		}
	}
	return best, best > 0
}

// KeepingLegacyArgs is the plan with each queue that exists in s declared
// with the legacy arguments it has there (WithLegacyArgs), so that applying
// it over a ladder an earlier rungs declared is not refused.
func (p Plan) KeepingLegacyArgs(s Snapshot) Plan {
	qs := make([]Queue, len(p.Queues))
	copy(qs, p.Queues)
	for i, q := range qs {
		if got, ok := s.Queue(q.Name); ok {
			qs[i].Args = WithLegacyArgs(q.Args, got.Args)
		}
	}
	p.Queues = qs
	return p
}
