package topology

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// QueueType is the RabbitMQ queue type a ladder's rungs are declared with.
type QueueType string

// Queue types a ladder can use.
const (
	Classic QueueType = "classic"
	Quorum  QueueType = "quorum"
)

// Defaults for a new ladder.
const (
	DefaultName = "rungs"
	DefaultUnit = time.Second
	// DefaultBinaryLevels is the default range in binary digits: 2^28
	// units, 8.5 years at 1s, as in the widest ladders in use (NServiceBus,
	// Celery). A ladder of another radix gets the fewest levels holding it.
	DefaultBinaryLevels = 28
	// DefaultRadix is the prefix and direct layouts': radix 16 measured cheapest and
	// most punctual of 2, 4, 8 and 16 (docs/benchmarks), with a third of
	// radix 2's broker CPU per message. The other layouts are binary.
	DefaultRadix = 16
	// DefaultQueueType is quorum: classic queues dead-letter at most once
	// and lost 1,619 of 40,000 messages between rungs when a node stopped;
	// quorum lost none, and its one known failure (a stall after a restart)
	// is detected and cured by `rungs unstall`. Quorum costs more broker
	// CPU and latency (README, "Why quorum by default").
	DefaultQueueType = Quorum
	// MinUnit is the finest resolution: x-message-ttl is whole milliseconds.
	MinUnit = time.Millisecond
	// MaxKeyBytes is AMQP's limit for a routing key (a short string).
	MaxKeyBytes = 255
)

// Ladder describes one delay ladder: enough to compute its whole plan.
type Ladder struct {
	Name      string        // prefix of every object's name
	Vhost     string        // the vhost the ladder lives in
	Layout    string        // name of the Layout that shapes it
	Unit      time.Duration // resolution: the TTL of the lowest rung
	Levels    int           // number of digit positions
	Radix     int           // digit base; 2 is the binary ladder
	QueueType QueueType
	// AtMostOnce declares the quorum rungs with x-dead-letter-strategy
	// at-most-once instead of at-least-once: a burst drains faster
	// (docs/benchmarks/drain.md), and a message is lost when the next rung
	// cannot take it at the moment it expires (AtMostOnceRisk). Only rungs'
	// own layouts on quorum rungs: classic queues are at most once already.
	AtMostOnce bool
	// AtMostOnceBelow, when AtMostOnce, limits it to the rungs whose TTL
	// is below it (the short rungs a burst crowds); 0 is every rung.
	// Normalize makes it the TTL of the shortest rung left at least once,
	// so that one set of rungs has one spelling.
	AtMostOnceBelow time.Duration
	// Targets are the destination queues bound to receive messages addressed
	// to them when their delay is over (the retry-with-backoff case). Kept
	// sorted and free of duplicates by Normalize.
	Targets []string
}

// Errors a ladder or a delay can fail with. Messages wrap them with detail.
var (
	ErrInvalidLadder = errors.New("invalid ladder")
	ErrDelayTooLong  = errors.New("delay exceeds the ladder's maximum")
	ErrNegativeDelay = errors.New("delay is negative")
	ErrKeyTooLong    = errors.New("routing key longer than 255 bytes")
	ErrBadKey        = errors.New("routing key does not belong to this ladder")
	ErrBadDest       = errors.New("invalid destination")
	ErrNoDest        = errors.New("layout has no destinations")
)

// Normalize fills in defaults and checks the ladder against its layout. It is
// the one place a Ladder is validated; everything else may assume its result.
func (l Ladder) Normalize() (Ladder, error) {
	if l.Layout == "" {
		l.Layout = DefaultLayout
	}
	lay, err := LayoutByName(l.Layout)
	if err != nil {
		return l, err
	}
	if l.Name == "" {
		l.Name = DefaultName
	}
	if l.Vhost == "" {
		l.Vhost = "/"
	}
	if l.Unit == 0 {
		l.Unit = DefaultUnit
	}
	if l.Radix == 0 {
		l.Radix = DefaultRadixFor(l.Layout)
	}
	if l.Levels == 0 {
		l.Levels = DefaultLevelsFor(l.Radix)
	}
	// A layout that fixes its queue type (nsb1 is classic) sets it in
	// lay.normalize; only then does an unset type take the default.
	l, err = lay.normalize(l)
	if err != nil {
		return l, err
	}
	if l.QueueType == "" {
		l.QueueType = DefaultQueueType
	}
	if err := checkName(l.Name); err != nil {
		return l, err
	}
	switch {
	case l.AtMostOnce && l.QueueType == Classic:
		return l, fmt.Errorf("%w: at-most-once dead-lettering is for quorum rungs; classic queues ignore x-dead-letter-strategy and dead-letter at most once already", ErrInvalidLadder)
	case l.AtMostOnce && !ownLayout(l.Layout):
		return l, fmt.Errorf("%w: layout %s declares its queues as its library does; at-most-once dead-lettering is for rungs' own layouts (%s)", ErrInvalidLadder, l.Layout, strings.Join(ownLayouts, ", "))
	}
	if l, err = l.normalizeBelow(); err != nil {
		return l, err
	}
	switch {
	case l.QueueType != Classic && l.QueueType != Quorum:
		return l, fmt.Errorf("%w: queue type %q (want classic or quorum)", ErrInvalidLadder, l.QueueType)
	case l.Unit < MinUnit:
		return l, fmt.Errorf("%w: unit %s is below the 1ms resolution of x-message-ttl", ErrInvalidLadder, l.Unit)
	case l.Unit%time.Millisecond != 0:
		return l, fmt.Errorf("%w: unit %s is not a whole number of milliseconds", ErrInvalidLadder, l.Unit)
	case l.Radix != 2 && l.Radix != 4 && l.Radix != 8 && l.Radix != 16:
		return l, fmt.Errorf("%w: radix %d (want 2, 4, 8 or 16)", ErrInvalidLadder, l.Radix)
	case l.Levels < 1 || l.Levels > 64:
		return l, fmt.Errorf("%w: %d levels (want 1 to 64)", ErrInvalidLadder, l.Levels)
	}
	if _, ok := l.maxUnits(); !ok {
		return l, fmt.Errorf("%w: %d levels of radix %d at %s overflow the longest representable delay", ErrInvalidLadder, l.Levels, l.Radix, l.Unit)
	}
	targets := make([]string, 0, len(l.Targets))
	for _, t := range l.Targets {
		if err := checkDest(t); err != nil {
			return l, err
		}
		targets = append(targets, t)
	}
	sort.Strings(targets)
	l.Targets = dedupe(targets)
	return l, nil
}

// CheckName rejects a ladder name no ladder can have, before anything is
// read by it: a read by name builds patterns from it.
func CheckName(name string) error { return checkName(name) }

// checkName rejects ladder names that cannot prefix AMQP object names or that
// would confuse discovery (a topic wildcard in a name).
func checkName(name string) error {
	switch {
	case !utf8.ValidString(name):
		// RabbitMQ closes the whole connection on a name that is not UTF-8.
		return fmt.Errorf("%w: name %q is not valid UTF-8", ErrInvalidLadder, name)
	case strings.TrimSpace(name) != name || name == "":
		return fmt.Errorf("%w: name %q is empty or has surrounding spaces", ErrInvalidLadder, name)
	case strings.ContainsAny(name, "*#"):
		return fmt.Errorf("%w: name %q contains a topic wildcard", ErrInvalidLadder, name)
	case len(name) > 200:
		return fmt.Errorf("%w: name is %d bytes; queue names are limited to 255 with suffixes", ErrInvalidLadder, len(name))
	}
	return nil
}

// checkDest validates a destination: dot-separated topic words, none of them
// a wildcard, short enough to leave room for the digits.
func checkDest(dest string) error {
	if dest == "" {
		return fmt.Errorf("%w: empty destination", ErrBadDest)
	}
	if !utf8.ValidString(dest) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrBadDest, dest)
	}
	for _, w := range strings.Split(dest, ".") {
		switch {
		case w == "":
			return fmt.Errorf("%w: %q has an empty word", ErrBadDest, dest)
		case strings.ContainsAny(w, "*#"):
			return fmt.Errorf("%w: %q contains a topic wildcard", ErrBadDest, dest)
		}
	}
	if len(dest) > MaxKeyBytes {
		return fmt.Errorf("%w: %q is longer than 255 bytes", ErrBadDest, dest)
	}
	return nil
}

// maxUnits is the largest delay the ladder can express, in units: radix^levels - 1.
// ok is false if that, or that many units, does not fit a time.Duration.
func (l Ladder) maxUnits() (uint64, bool) {
	r := uint64(l.Radix)
	max := uint64(1)
	for i := 0; i < l.Levels; i++ {
		if max > math.MaxUint64/r {
			return 0, false
		}
		max *= r
	}
	max--
	if max > uint64(math.MaxInt64/int64(l.Unit)) {
		return 0, false
	}
	return max, true
}

// MaxDelay is the longest delay the ladder can hold.
func (l Ladder) MaxDelay() time.Duration {
	m, _ := l.maxUnits()
	return time.Duration(m) * l.Unit
}

// DefaultRadixFor is the radix a new ladder of the layout gets.
func DefaultRadixFor(layout string) int {
	switch layout {
	case "", "prefix", "direct":
		return DefaultRadix
	}
	return 2
}

// DefaultLevelsFor is the fewest levels of radix whose range is at least
// the default's, 2^DefaultBinaryLevels units (28, 14, 10 and 7 levels for
// radix 2, 4, 8 and 16); 0 for a radix that is not a power of two.
func DefaultLevelsFor(radix int) int {
	bits := 0
	for r := radix; r > 1; r >>= 1 {
		if r&1 != 0 {
			return 0
		}
		bits++
	}
	if bits == 0 {
		return 0
	}
	return (DefaultBinaryLevels + bits - 1) / bits
}

// LevelsFor returns the fewest levels whose ladder holds maxDelay.
func LevelsFor(maxDelay, unit time.Duration, radix int) (int, error) {
	if unit <= 0 || radix < 2 {
		return 0, fmt.Errorf("%w: unit %s, radix %d", ErrInvalidLadder, unit, radix)
	}
	if maxDelay <= 0 {
		return 0, fmt.Errorf("%w: max delay %s must be positive", ErrInvalidLadder, maxDelay)
	}
	units := ceilUnits(maxDelay, unit)
	levels, capacity := 0, uint64(1)
	for capacity-1 < units {
		capacity *= uint64(radix)
		levels++
	}
	return levels, nil
}

// Units converts a delay into whole units, rounding up so that a message is
// never delivered early, and checks it against the ladder's maximum.
func (l Ladder) Units(d time.Duration) (uint64, error) {
	if d < 0 {
		return 0, fmt.Errorf("%w: %s", ErrNegativeDelay, FormatDelay(d))
	}
	u := ceilUnits(d, l.Unit)
	if max, _ := l.maxUnits(); u > max {
		return 0, fmt.Errorf("%w: %s > %s (%d levels of %s)", ErrDelayTooLong, FormatDelay(d), FormatDelay(l.MaxDelay()), l.Levels, FormatDelay(l.Unit))
	}
	return u, nil
}

func ceilUnits(d, unit time.Duration) uint64 {
	u := uint64(d / unit)
	if d%unit != 0 {
		u++
	}
	return u
}

// Digits spells units in the ladder's radix, most significant first, always
// Levels digits long.
func (l Ladder) Digits(units uint64) []int {
	ds := make([]int, l.Levels)
	for i := l.Levels - 1; i >= 0; i-- {
		ds[i] = int(units % uint64(l.Radix))
		units /= uint64(l.Radix)
	}
	return ds
}

// RungTTL is the TTL of the rung at level with digit value d.
func (l Ladder) RungTTL(level, d int) time.Duration {
	ttl := time.Duration(d) * l.Unit
	for i := 0; i < level; i++ {
		ttl *= time.Duration(l.Radix)
	}
	return ttl
}

// String names the ladder the way operators read it: vhost/name.
func (l Ladder) String() string {
	return fmt.Sprintf("%s (%s, %s)", l.Name, l.Layout, l.Vhost)
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
