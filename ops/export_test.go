package ops

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func TestHCLStringEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`a.b`:      `"a.b"`,
		`q"x`:      `"q\"x"`,
		`back\sl`:  `"back\\sl"`,
		`${var.x}`: `"$${var.x}"`,
		`%{ if }`:  `"%%{ if }"`,
		"new\nl":   `"new\nl"`,
		`*.#.1`:    `"*.#.1"`,
	} {
		if got := hclString(in); got != want {
			t.Errorf("hclString(%q) = %s, want %s", in, got, want)
		}
	}
	n := newTFNames()
	a, b, c := n.take("q", "a.b"), n.take("q", "a_b"), n.take("q", "9lives")
	if a != "a_b" || b == a || !strings.HasPrefix(b, "a_b_") || c != "_9lives" {
		t.Errorf("names %q %q %q", a, b, c)
	}
}

func TestExportFormats(t *testing.T) {
	l, err := topology.Ladder{Name: "ex", Vhost: "v", Layout: "direct", Unit: time.Second, Levels: 3, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format string
		check  func([]byte) bool
		err    string
	}{
		{ExportDefinitions, func(b []byte) bool { var v map[string]any; return json.Unmarshal(b, &v) == nil && v["queues"] != nil }, ""},
		{ExportTerraform, func(b []byte) bool {
			return strings.Contains(string(b), "(v9)") && strings.Contains(string(b), `resource "rabbitmq_queue" "work"`)
		}, ""},
		{"yaml", nil, `--format "yaml": want definitions or terraform`},
	}
	for _, tc := range cases {
		data, err := Export(tc.format, l, l.Plan(), "v9")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || !IsInputError(err) {
				t.Errorf("%s: %v", tc.format, err)
			}
			continue
		}
		if err != nil || !tc.check(data) {
			t.Errorf("%s: %v\n%s", tc.format, err, data)
		}
	}
}
