package topology

import (
	"fmt"
	"regexp"
	"sort"
	"time"
)

// Policies are the policies and operator policies of one vhost.
type Policies struct {
	Policies, Operator []Policy
	// OperatorUnread is set when the user may not list operator policies
	// (it needs the policymaker or administrator tag): one may apply
	// unseen.
	OperatorUnread bool
}

// Policy is a policy or operator policy as the management API lists it.
type Policy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// Applies reports whether the policy matches a queue. A pattern Go's regexp
// cannot compile (a PCRE-only construct) is taken to match, so that a limit
// is overstated rather than missed.
func (p Policy) Applies(q Queue) bool {
	switch p.ApplyTo {
	case "queues", "all", "":
	case "quorum_queues":
		if q.QueueType() != Quorum {
			return false
		}
	case "classic_queues":
		if q.QueueType() != Classic {
			return false
		}
	default:
		return false
	}
	re, err := regexp.Compile(p.Pattern)
	return err != nil || re.MatchString(q.Name)
}

// Applying returns the policy of ps that applies to q: of those that match
// it, the one of highest priority (by name among equals, as RabbitMQ
// breaks ties).
func Applying(q Queue, ps []Policy) (Policy, bool) {
	var match []Policy
	for _, p := range ps {
		if p.Applies(q) {
			match = append(match, p)
		}
	}
	if len(match) == 0 {
		return Policy{}, false
	}
	sort.SliceStable(match, func(i, j int) bool {
		if match[i].Priority != match[j].Priority {
			return match[i].Priority > match[j].Priority
		}
		return match[i].Name < match[j].Name
	})
	return match[0], true
}

// DelayedRetry is quorum delayed retry as one source configures it on a
// queue: RabbitMQ 4.3 holds a returned or failed message back for Min to
// Max before it is ready again (reported as messages_delayed). On a delay
// queue that hold comes on top of the TTL. Older releases accept the
// arguments and ignore them, and refuse the policy keys.
type DelayedRetry struct {
	// Source says what sets it: "argument" (x-delayed-retry-*), "policy"
	// or "operator policy"; Name is the policy's.
	Source, Name string
	// Type is all, failed or returned.
	Type string
	// Min and Max bound the hold; Max is 0 when unset.
	Min, Max time.Duration
}

// String names the source and what it sets, e.g. "policy slow (type all,
// 3s–10s)".
func (d DelayedRetry) String() string {
	src := "arguments x-delayed-retry-*"
	if d.Source != "argument" {
		src = d.Source + " " + d.Name
	}
	hold := FormatSpan(d.Min)
	if d.Max > 0 {
		hold += "–" + FormatSpan(d.Max)
	}
	return fmt.Sprintf("%s (type %s, %s)", src, d.Type, hold)
}

// DelayedRetries lists every source that configures delayed retry on q:
// its x-delayed-retry-* arguments, and the delayed-retry-* keys of the
// policy and of the operator policy that apply to it. A source that sets
// the type to disabled, or no minimum (the broker needs one to enable it),
// configures none.
func DelayedRetries(q Queue, ps Policies) []DelayedRetry {
	var out []DelayedRetry
	add := func(source, name string, get func(key string) any) {
		typ, _ := get("type").(string)
		lo, ok := HeaderInt(get("min"))
		if typ == "" || typ == "disabled" || !ok || lo <= 0 {
			return
		}
		d := DelayedRetry{Source: source, Name: name, Type: typ, Min: time.Duration(lo) * time.Millisecond}
		if hi, ok := HeaderInt(get("max")); ok && hi > 0 {
			d.Max = time.Duration(hi) * time.Millisecond
		}
		out = append(out, d)
	}
	add("argument", "", func(k string) any { return q.Args["x-delayed-retry-"+k] })
	for _, src := range []struct {
		source string
		ps     []Policy
	}{{"policy", ps.Policies}, {"operator policy", ps.Operator}} {
		if p, ok := Applying(q, src.ps); ok {
			add(src.source, p.Name, func(k string) any { return p.Definition["delayed-retry-"+k] })
		}
	}
	return out
}
