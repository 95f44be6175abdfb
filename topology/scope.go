package topology

import (
	"regexp"
	"sort"
	"strings"
)

// Scope names the objects a reader fetches to show some ladders of one
// vhost, so that what a refresh costs follows the ladders and not the
// vhost: a broker beside 10,000 other queues filters its listings by
// Regex and sends only these. An empty Vhost means every vhost
// (discovery).
type Scope struct {
	Vhost string
	// Patterns are regular expressions, each matching whole names that
	// ladders own (Layout.Owns: their objects and any left-over rung), in
	// the syntax Go's regexp and the broker's PCRE share.
	Patterns []string
	// Names are further queues and exchanges read with the ladders: their
	// targets, parked queues and the queues those dead-letter to.
	Names []string
	// Inbound also reads every binding into the scope's queues, whatever
	// its source: drift from an exchange no ladder owns (a stray binding
	// into a rung) shows only so. It costs a request per queue, so a
	// check (doctor) asks for it and a refresh does not.
	Inbound bool
	// Bound reads queues by name instead of listing them: those the
	// scope's exchanges bind, and Names. Beside 10,000 other queues a
	// listing, filtered or not, makes the broker walk every queue of the
	// vhost; a read by name does not. A queue the patterns own that
	// nothing binds and Names omits (a left-over rung) is not seen, so a
	// check that looks for those (doctor) lists.
	Bound bool
	// Queues are more queues a Bound scope reads by name: a ladder's
	// planned queues, so that a rung that lost its binding is still read.
	// They are not part of Regex (a listing's filter has a length limit).
	Queues []string
}

// Scope is the ladder's scope: every name it owns, present or left over,
// and its targets with their parked queues. The queues a target
// dead-letters to are known only from a snapshot; see Covering.
func (l Ladder) Scope() Scope {
	return ScopeOf(l.Vhost, []Ladder{l})
}

// ScopeOf is the scope of several ladders of one vhost, as a console's
// ladder list shows them.
func ScopeOf(vhost string, ls []Ladder) Scope {
	sc := Scope{Vhost: vhost}
	for _, l := range ls {
		if p := l.layout().namePattern(regexp.QuoteMeta(l.Name)); p != "" {
			sc.Patterns = append(sc.Patterns, p)
		}
		for _, t := range l.Targets {
			sc.Names = append(sc.Names, t, t+".parked")
		}
	}
	return sc.normalized()
}

// DiscoveryScope matches every name a ladder of any layout may own, in
// every vhost: what discovery has to read, and not the other queues.
func DiscoveryScope() Scope {
	var sc Scope
	for _, lay := range Layouts() {
		sc.Patterns = append(sc.Patterns, lay.namePattern(lay.anyName()))
	}
	return sc.normalized()
}

// NamedScope matches every name ladders called one of names may own, in
// any layout: what to read of ladders known by name before their layout
// is.
func NamedScope(vhost string, names []string) Scope {
	sc := Scope{Vhost: vhost}
	for _, n := range names {
		for _, lay := range Layouts() {
			if p := lay.namePattern(regexp.QuoteMeta(n)); p != "" {
				sc.Patterns = append(sc.Patterns, p)
			}
		}
	}
	return sc.normalized()
}

// With is the scope with more names.
func (s Scope) With(names ...string) Scope {
	s.Names = append(append([]string(nil), s.Names...), names...)
	return s.normalized()
}

// Covering is the scope with every queue and exchange of snap that its
// patterns miss: a ladder's snapshot holds its targets' dead-letter
// queues, which its statistics must follow too.
func (s Scope) Covering(snap Snapshot) Scope {
	match := s.Matcher()
	var more []string
	for _, q := range snap.Queues {
		if !match(q.Name) {
			more = append(more, q.Name)
		}
	}
	for _, x := range snap.Exchanges {
		if !match(x.Name) {
			more = append(more, x.Name)
		}
	}
	return s.With(more...)
}

// Empty reports whether the scope matches nothing: there is nothing to
// read.
func (s Scope) Empty() bool { return len(s.Patterns) == 0 && len(s.Names) == 0 }

// Regex is the scope as one anchored regular expression; "" when Empty.
func (s Scope) Regex() string {
	if s.Empty() {
		return ""
	}
	alts := append([]string(nil), s.Patterns...)
	for _, n := range s.Names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// Matcher reports whether a name is in the scope. A broker's filter is
// not taken on trust (RabbitMQ matches without regard to case), so
// readers check what it sent with this.
func (s Scope) Matcher() func(name string) bool {
	if s.Empty() {
		return func(string) bool { return false }
	}
	re := regexp.MustCompile(s.Regex())
	return re.MatchString
}

// normalized sorts the patterns and names and drops duplicates, so that
// equal scopes read alike and the regex stays short.
func (s Scope) normalized() Scope {
	s.Patterns = uniqueSorted(s.Patterns)
	s.Names = uniqueSorted(s.Names)
	return s
}

func uniqueSorted(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := append([]string(nil), in...)
	sort.Strings(out)
	n := 1
	for _, v := range out[1:] {
		if v != out[n-1] {
			out[n] = v
			n++
		}
	}
	return out[:n]
}
