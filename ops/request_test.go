package ops

import (
	"errors"
	"testing"
	"time"
)

func TestParseLimitHasOneSpellingOfNoLimit(t *testing.T) {
	for in, want := range map[string]int{"": 0, "0": 0, " 0 ": 0, "25": 25} {
		if got, err := ParseLimit(in); err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "ten", "1.5"} {
		var fe *FieldError
		if _, err := ParseLimit(in); !errors.As(err, &fe) || fe.Field != "limit" {
			t.Errorf("ParseLimit(%q) = %v, want a limit field error", in, err)
		}
	}
}

func TestWhereMatchesValuesNotTheirDrawing(t *testing.T) {
	at := time.Date(2025, 3, 14, 9, 16, 53, 0, time.UTC)
	cases := map[string]struct {
		v    any
		want string
		ok   bool
	}{
		"string":               {"acme", "acme", true},
		"byte array":           {[]byte("acme"), "acme", true},
		"byte array, as drawn": {[]byte("acme"), "0x61636d65", false},
		"int32":                {int32(7), "7", true},
		"int64, leading zero":  {int64(7), "007", true},
		"uint8":                {uint8(200), "200", true},
		"int, other":           {int64(7), "8", false},
		"float":                {0.5, "0.5", true},
		"bool":                 {true, "true", true},
		"bool, wrong":          {false, "true", false},
		"time, RFC 3339":       {at, "2025-03-14T09:16:53Z", true},
		"time, unix seconds":   {at, "1741943813", true},
		"table":                {map[string]any{"a": "b"}, `{"a":"b"}`, false},
		"nil":                  {nil, "", false},
	}
	for name, tc := range cases {
		if got := HeaderValueIs(tc.v, tc.want); got != tc.ok {
			t.Errorf("%s: HeaderValueIs(%#v, %q) = %v", name, tc.v, tc.want, got)
		}
	}
	match, err := Where([]string{"tenant=acme", "n=7"})
	if err != nil {
		t.Fatal(err)
	}
	if !match(map[string]any{"tenant": []byte("acme"), "n": int16(7)}) || match(map[string]any{"tenant": "acme"}) {
		t.Error("Where needs every term, and matches values")
	}
	if _, err := Where([]string{"tenant"}); err == nil {
		t.Error("a term without = was taken")
	}
}

func TestReplayRequestCheck(t *testing.T) {
	cases := map[string]struct {
		req   ReplayRequest
		field string
	}{
		"no source":       {ReplayRequest{To: ReplayTo{Origin: true}}, "from"},
		"into itself":     {ReplayRequest{Source: "q", To: ReplayTo{Queue: "q"}}, "queue"},
		"park in itself":  {ReplayRequest{Source: "q", To: ReplayTo{Origin: true}, Park: "q"}, "park"},
		"negative limit":  {ReplayRequest{Source: "q", To: ReplayTo{Origin: true}, Limit: -1}, "limit"},
		"negative rate":   {ReplayRequest{Source: "q", To: ReplayTo{Origin: true}, Rate: -1}, "rate"},
		"where without =": {ReplayRequest{Source: "q", To: ReplayTo{Origin: true}, Where: []string{"x"}}, "where"},
	}
	for name, tc := range cases {
		var fe *FieldError
		if _, err := tc.req.Check(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a %s field error", name, err, tc.field)
		}
	}
	o, err := ReplayRequest{Source: "q", To: ReplayTo{Origin: true}, Where: []string{"a=b"}}.Check()
	if err != nil || o.Filter == nil || o.MaxHeld != whereMaxHeld || o.Limit != 0 {
		t.Errorf("a filtered replay: %+v %v", o, err)
	}
}
