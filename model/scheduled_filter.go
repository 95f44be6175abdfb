package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The console's `/` on the scheduled view reads the CLI's filter flags as
// NAME=VALUE terms (`id=ord-8812 where=tenant=acme within=1h`), so an
// operator who learnt one front end knows the other. A bare word is a
// message-id (or Celery task id), the question asked most: "find 8812".
//
// TODO(lead): the parser belongs in ops beside ops.Filter, shared with
// cli/scheduled.go (requested in /work/wt/scheduled-API-requests.md).

// scheduledFilterNames are the terms the filter takes, as the CLI's flags.
var scheduledFilterNames = []string{"id", "correlation-id", "where", "body", "dest", "due-before", "due-after", "within"}

// parseScheduledFilter reads a filter line at now. An error is one line
// naming the term.
func parseScheduledFilter(line string, now time.Time) (ops.Filter, error) {
	var f ops.Filter
	terms, err := splitTerms(line)
	if err != nil {
		return f, err
	}
	for _, t := range terms {
		name, value, ok := strings.Cut(t, "=")
		if !ok {
			name, value = "id", t
		}
		name = strings.TrimPrefix(name, "--")
		if value == "" {
			return f, fmt.Errorf("%s: no value (%s=VALUE)", name, name)
		}
		switch name {
		case "id", "message-id", "task-id":
			f.MessageID = value
		case "correlation-id", "corr":
			f.CorrelationID = value
		case "where":
			f.Where = append(f.Where, value)
		case "body":
			f.Body = value
		case "dest", "destination":
			f.Dest = value
		case "due-before", "before":
			if f.DueBefore, err = ops.ParseWhen(value, now); err != nil {
				return f, fmt.Errorf("%s: %w", name, err)
			}
		case "due-after", "after":
			if f.DueAfter, err = ops.ParseWhen(value, now); err != nil {
				return f, fmt.Errorf("%s: %w", name, err)
			}
		case "due-within", "within":
			d, err := topology.ParseDelay(value)
			if err != nil {
				return f, fmt.Errorf("%s: %w", name, err)
			}
			f.DueBefore = now.Add(d)
		default:
			return f, fmt.Errorf("%q is not a filter term; use %s", name, strings.Join(scheduledFilterNames, ", "))
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

// parseNewDue reads a reschedule's target: a delay from when each message
// is moved ("90s", "2h"), an RFC 3339 time, or a clock time ("09:00", the
// next one to come, in now's zone).
func parseNewDue(s string, now time.Time) (time.Duration, time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, time.Time{}, fmt.Errorf("give a new delay (90s, 2h) or time (09:00, 2026-01-02T15:04:05Z)")
	}
	if t, err := time.ParseInLocation("15:04", s, now.Location()); err == nil {
		at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		return 0, at, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return 0, t, nil
	}
	d, err := topology.ParseDelay(strings.TrimPrefix(s, "+"))
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%q is neither a delay (90s, 2h), a clock time (09:00) nor an RFC 3339 time", s)
	}
	return d, time.Time{}, nil
}
