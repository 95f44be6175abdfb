package ops

import (
	"slices"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want topology.Version
		bad  bool
	}{
		{"", topology.Version{}, false},
		{"4.3", topology.Version{Major: 4, Minor: 3}, false},
		{"4.3.6", topology.Version{Major: 4, Minor: 3, Patch: 6}, false},
		{"soon", topology.Version{}, true},
	} {
		v, err := ParseTarget(tc.in)
		switch {
		case tc.bad && (!IsInputError(err) || !strings.Contains(err.Error(), `--target "soon" is not a RabbitMQ release`)):
			t.Errorf("%q: %v, want bad input", tc.in, err)
		case !tc.bad && (err != nil || v.Major != tc.want.Major || v.Minor != tc.want.Minor || v.Patch != tc.want.Patch):
			t.Errorf("%q: %v, %v", tc.in, v, err)
		}
	}
}

// A definitions file is checked per vhost it lists, else as the vhost
// asked; one that is not a definitions file is bad input.
func TestDefinitionsChecks(t *testing.T) {
	areas := func(fs Findings) []string {
		var out []string
		for _, f := range fs {
			if !slices.Contains(out, f.Area) {
				out = append(out, f.Area)
			}
		}
		return out
	}
	fs, err := DefinitionsChecks([]byte(`{"rabbitmq_version":"3.10.8","vhosts":[{"name":"/"},{"name":"jobs"}]}`), "defs.json", "other", topology.Version{})
	if err != nil {
		t.Fatal(err)
	}
	if got := areas(fs); !slices.Equal(got, []string{"definitions", DelayArea("/"), DelayArea("jobs")}) || !strings.Contains(fs[0].Text, "defs.json, exported by RabbitMQ 3.10.8") {
		t.Errorf("%v %+v", got, fs[0])
	}
	fs, err = DefinitionsChecks([]byte(`{}`), "defs.json", "other", topology.Version{})
	if err != nil {
		t.Fatal(err)
	}
	if got := areas(fs); !slices.Equal(got, []string{"definitions", DelayArea("other")}) || !strings.HasSuffix(fs[0].Text, "exported by RabbitMQ -") {
		t.Errorf("%v %+v", got, fs[0])
	}
	if _, err := DefinitionsChecks([]byte(`not json`), "defs.json", "/", topology.Version{}); !IsInputError(err) || !strings.Contains(err.Error(), "--definitions defs.json is not a definitions file") {
		t.Errorf("not json: %v", err)
	}
}
