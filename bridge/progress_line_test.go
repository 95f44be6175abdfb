package bridge

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	const quiet = "taken 0: 0 scheduled, 0 delivered now, 0 parked; 0 left the ladder (latest 0s late, most 0s); intake lag 0s; 0 redelivered, 0 unconfirmed"
	for _, tc := range []struct {
		name string
		p    Progress
		want string
	}{
		{"nothing yet", Progress{}, quiet},
		{"counts and lateness, rounded to the millisecond",
			Progress{Received: 9, Scheduled: 5, Now: 2, Exited: 4, ExitLate: 1500*time.Millisecond + 300*time.Microsecond, ExitLateMax: 2 * time.Second, IntakeLag: 3 * time.Second, Redelivered: 1, Unconfirmed: 1},
			"taken 9: 5 scheduled, 2 delivered now, 0 parked; 4 left the ladder (latest 1.5s late, most 2s); intake lag 3s; 1 redelivered, 1 unconfirmed"},
		{"parked reasons sorted",
			Progress{Parked: map[string]int64{"x-delay not a number": 2, "beyond the ladder": 1}},
			"taken 0: 0 scheduled, 0 delivered now, 3 parked; 0 left the ladder (latest 0s late, most 0s); intake lag 0s; 0 redelivered, 0 unconfirmed (parked: 1 beyond the ladder; 2 x-delay not a number)"},
		{"messages without a receipt time", Progress{NoReceipt: 4}, quiet + "; 4 without timestamp_in_ms, counted from when taken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Line(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
