package ops

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func TestParsePublishRate(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		err  bool
	}{
		{"", 0, false},
		{"max", Unpaced, false},
		{"500/s", 500, false},
		{"6000/m", 100, false},
		{"fast", 0, true},
	}
	for _, tc := range cases {
		got, err := ParsePublishRate(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%q: %v %v, want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReadBody(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.json")
	if err := os.WriteFile(file, []byte(`{"id":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec, want, err string
	}{
		{"hello", "hello", ""},
		{"", "", ""},
		{"@" + file, `{"id":1}`, ""},
		{"@" + filepath.Join(dir, "none"), "", "--body: "},
	}
	for _, tc := range cases {
		got, err := ReadBody(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) || !IsInputError(err) {
				t.Errorf("%q: %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %q %v", tc.spec, got, err)
		}
	}
}

func TestPublishPlanFound(t *testing.T) {
	l, err := topology.Ladder{Name: "pf", Vhost: "/", Layout: "direct", Unit: time.Second, Levels: 8, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	g := topology.NewGraph(l.Plan().Snapshot())
	ok := PublishRequest{Ladder: l, Delay: 5 * time.Second, Count: 1}
	tooLong := ok
	tooLong.Delay = 1000 * time.Hour
	cases := []struct {
		name  string
		req   PublishRequest
		g     *topology.Graph
		found bool
		want  error
		fails bool
	}{
		{"found", ok, g, true, nil, false},
		{"not read", ok, nil, false, nil, false},
		{"read, not there", ok, g, false, ErrLadderNotFound, true},
		{"a bad delay is said before a missing ladder", tooLong, g, false, nil, true},
	}
	for _, tc := range cases {
		_, err := tc.req.PlanFound(tc.g, tc.found)
		if (err != nil) != tc.fails || tc.want != nil && !errors.Is(err, tc.want) || tc.want == nil && errors.Is(err, ErrLadderNotFound) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
