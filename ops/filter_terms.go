package ops

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/rungs-dev/rungs/topology"
)

// FilterTerms are a scheduled-messages filter as both front ends take it,
// before it is read: the CLI's flags (--id, --where, --within, ...) and the
// console's `/` line of NAME=VALUE terms (`id=ord-8812 within=1h`), so that
// an operator who learnt one knows the other.
type FilterTerms struct {
	ID, CorrelationID string
	Where             []string
	Body, Dest        string
	// DueBefore and DueAfter are RFC 3339 times or spans from now; Within
	// is a span from now, another way to say DueBefore.
	DueBefore, DueAfter, Within string
}

// FilterTermNames are the terms, named as the CLI's flags.
var FilterTermNames = []string{"id", "correlation-id", "where", "body", "dest", "due-before", "due-after", "within"}

// ParseFilterLine reads a line of NAME=VALUE terms. A bare word is a
// message-id (or Celery task id), the question asked most: "find 8812".
// Quotes ('…' or "…") keep blanks inside a value. An error is one line
// naming the term.
func ParseFilterLine(line string) (FilterTerms, error) {
	var t FilterTerms
	// A control character (a newline from a pasted argument) is a blank:
	// kept, it would split the one-line error it ends up in.
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, line)
	words, err := splitTerms(line)
	if err != nil {
		return t, err
	}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			name, value = "id", w
		}
		name = strings.TrimPrefix(name, "--")
		if value == "" {
			return t, fmt.Errorf("%s: no value (%s=VALUE)", name, name)
		}
		switch name {
		case "id", "message-id", "task-id":
			t.ID = value
		case "correlation-id", "corr":
			t.CorrelationID = value
		case "where":
			t.Where = append(t.Where, value)
		case "body":
			t.Body = value
		case "dest", "destination":
			t.Dest = value
		case "due-before", "before":
			t.DueBefore = value
		case "due-after", "after":
			t.DueAfter = value
		case "due-within", "within":
			t.Within = value
		default:
			return t, fmt.Errorf("%q is not a filter term; use %s", name, strings.Join(FilterTermNames, ", "))
		}
	}
	return t, nil
}

// Filter reads the terms at now and checks the result (Filter.Compile).
// A bad term is a *FieldError whose Field is the term's name; an empty
// span of due times is the field "due".
func (t FilterTerms) Filter(now time.Time) (Filter, error) {
	f := Filter{MessageID: t.ID, CorrelationID: t.CorrelationID, Where: t.Where, Body: t.Body, Dest: t.Dest}
	var err error
	if t.DueBefore != "" {
		if f.DueBefore, err = ParseWhen(t.DueBefore, now); err != nil {
			return f, &FieldError{Field: "due-before", Err: err}
		}
	}
	if t.DueAfter != "" {
		if f.DueAfter, err = ParseWhen(t.DueAfter, now); err != nil {
			return f, &FieldError{Field: "due-after", Err: err}
		}
	}
	if t.Within != "" {
		d, err := topology.ParseDelay(strings.TrimPrefix(t.Within, "+"))
		if err != nil || d <= 0 {
			return f, fieldErr("within", "%q is not a span from now (90s, 1h, 2d)", t.Within)
		}
		// Both bounds given, the nearer holds.
		if at := now.Add(d); f.DueBefore.IsZero() || at.Before(f.DueBefore) {
			f.DueBefore = at
		}
	}
	if _, err := f.Compile(); err != nil {
		return f, err
	}
	return f, nil
}

// splitTerms splits a line at blanks, keeping quoted text ('…' or "…")
// together, so that a body text or a header value can hold spaces.
func splitTerms(line string) ([]string, error) {
	var terms []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				terms = append(terms, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote %c", quote)
	}
	if in {
		terms = append(terms, cur.String())
	}
	return terms, nil
}

// ParseAt reads a new due time: RFC 3339, a clock time ("09:00", the next
// one to come, in now's zone), or a span from now ("90s", "2h"). The result
// is after now.
func ParseAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if c, err := time.ParseInLocation("15:04", s, now.Location()); err == nil {
		at := time.Date(now.Year(), now.Month(), now.Day(), c.Hour(), c.Minute(), 0, 0, now.Location())
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		return at, nil
	}
	return ParseWhen(s, now)
}

// CheckRescheduleDelay is the one rule of a reschedule's new delay: it
// is positive, since a message to send now is fired, not rescheduled.
// typed is the delay as the user wrote it.
func CheckRescheduleDelay(d time.Duration, typed string) error {
	if d > 0 {
		return nil
	}
	if typed == "" {
		typed = d.String()
	}
	return fmt.Errorf("%s is not a delay; to send them now, fire them", typed)
}

// ParseNewDue reads a reschedule's target typed in one field: a delay from
// when each message is moved ("90s", "2h"), or a time (RFC 3339, or a clock
// time, as ParseAt). Exactly one of delay and at is set.
func ParseNewDue(s string, now time.Time) (delay time.Duration, at time.Time, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, time.Time{}, fmt.Errorf("give a new delay (90s, 2h) or time (09:00, 2026-01-02T15:04:05Z)")
	}
	if d, err := topology.ParseDelay(strings.TrimPrefix(s, "+")); err == nil {
		if err := CheckRescheduleDelay(d, s); err != nil {
			return 0, time.Time{}, err
		}
		return d, time.Time{}, nil
	}
	at, err = ParseAt(s, now)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%q is neither a delay (90s, 2h), a clock time (09:00) nor an RFC 3339 time in the future", s)
	}
	return 0, at, nil
}
