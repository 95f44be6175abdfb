package ops

import (
	"errors"
	"testing"
)

// The exits a front end ends a report with: drift for a route the
// bindings deny, an error for a doctor problem, and nothing else.
func TestReportExits(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"route checked and matching", RouteCheck{Checked: true}.Exit(), ExitOK},
		{"route unchecked", RouteCheck{Unchecked: "no management API"}.Exit(), ExitOK},
		{"route denied", RouteCheck{Checked: true, Err: errors.New("no binding")}.Exit(), ExitDrift},
		{"no findings", Findings(nil).Exit(), ExitOK},
		{"warnings only", Findings{{Status: FindingWarn}, {Status: FindingInfo}, {Status: FindingOK}}.Exit(), ExitOK},
		{"one problem", Findings{{Status: FindingOK}, {Status: FindingProblem}}.Exit(), ExitError},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}
