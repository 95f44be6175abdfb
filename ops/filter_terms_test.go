package ops

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFilterLine(t *testing.T) {
	for line, want := range map[string]FilterTerms{
		"8812":                           {ID: "8812"},
		"id=ord-88* corr=c1":             {ID: "ord-88*", CorrelationID: "c1"},
		"where=tenant=acme where=n=7":    {Where: []string{"tenant=acme", "n=7"}},
		`body="payment timeout" dest=w`:  {Body: "payment timeout", Dest: "w"},
		"--within=1h before=2h after=5m": {Within: "1h", DueBefore: "2h", DueAfter: "5m"},
		"  ":                             {},
	} {
		got, err := ParseFilterLine(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v %v, want %+v", line, got, err, want)
		}
	}
	for line, want := range map[string]string{
		"id=":        "id: no value",
		"colour=red": `"colour" is not a filter term`,
		`body="open`: "unclosed quote",
	} {
		if _, err := ParseFilterLine(line); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", line, err, want)
		}
	}
}

func TestFilterTermsRead(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	f, err := FilterTerms{Within: "1h", DueBefore: "2h"}.Filter(now)
	if err != nil || !f.DueBefore.Equal(now.Add(time.Hour)) {
		t.Errorf("within 1h and before 2h: %s %v; the nearer holds", f.DueBefore, err)
	}
	f, err = FilterTerms{Within: "3h", DueBefore: "2h"}.Filter(now)
	if err != nil || !f.DueBefore.Equal(now.Add(2*time.Hour)) {
		t.Errorf("within 3h and before 2h: %s %v", f.DueBefore, err)
	}
	for terms, field := range map[*FilterTerms]string{
		{DueBefore: "soon"}:                "due-before",
		{DueAfter: "2026-04-01T00:00:00Z"}: "due-after",
		{Within: "2026-05-02T00:00:00Z"}:   "within",
		{Within: "0s"}:                     "within",
		{Where: []string{"=x"}}:            "where",
		{DueAfter: "2h", DueBefore: "1h"}:  "due",
	} {
		var fe *FieldError
		if _, err := terms.Filter(now); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%+v: %v, want a FieldError on %s", *terms, err, field)
		}
	}
}

func TestParseAtAndNewDue(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"09:00":                now.Add(22*time.Hour + 30*time.Minute), // tomorrow's
		"11:00":                now.Add(30 * time.Minute),
		"2h":                   now.Add(2 * time.Hour),
		"2026-05-01T12:00:00Z": now.Add(90 * time.Minute),
	} {
		if got, err := ParseAt(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseAt(%s) = %s %v, want %s", in, got, err, want)
		}
	}
	if d, at, err := ParseNewDue("90s", now); err != nil || d != 90*time.Second || !at.IsZero() {
		t.Errorf("90s: %s %s %v", d, at, err)
	}
	if d, at, err := ParseNewDue("11:00", now); err != nil || d != 0 || !at.Equal(now.Add(30*time.Minute)) {
		t.Errorf("11:00: %s %s %v", d, at, err)
	}
	for _, in := range []string{"", "0s", "2026-04-01T00:00:00Z", "whenever"} {
		if _, _, err := ParseNewDue(in, now); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzParseFilterLine: any line reads as terms or one line of error, and
// terms read as a filter or a FieldError, never a panic.
func FuzzParseFilterLine(f *testing.F) {
	for _, s := range []string{"8812", "id=a* where=k=v within=1h", `body="a b"`, "before=2026-01-02T15:04:05Z after=1h", "'"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, line string) {
		terms, err := ParseFilterLine(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a two-line error: %q", err)
			}
			return
		}
		_, _ = terms.Filter(now)
	})
}
