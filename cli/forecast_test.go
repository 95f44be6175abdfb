package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/testutil"
)

// TestStatusForecast parks messages in a rung and reads the forecast from
// status and status --json: every message is due between the rung's
// bounds, none within the first minute (they wait 128s in the top rung and
// the head's age says they entered it just now). The ladder is classic: the
// management API reports no head timestamp for a quorum queue, so a quorum
// rung's forecast cannot narrow its earliest bound this way.
func TestStatusForecast(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "fc", "--unit", "1s", "--levels", "8", "--radix", "2", "--queue-type", "classic")
	mustRun(t, env, "publish", "--ladder", "fc", "--delay", "200s", "--count", "3")
	type forecast struct {
		Messages   int64  `json:"messages"`
		EarliestMS int64  `json:"earliest_ms"`
		LatestMS   *int64 `json:"latest_ms"`
		Dest       string `json:"destination"`
		Due        []struct {
			Within        string
			Min, Max, Est int64
		} `json:"due"`
	}
	var fc forecast
	// The management API's statistics lag by up to its interval, and the
	// head's timestamp may show up a round after the depth.
	_ = testutil.Poll{Within: 30 * time.Second, Every: 500 * time.Millisecond}.Until(t, func() error {
		var st struct {
			Ladders []struct {
				Forecast forecast `json:"forecast"`
			} `json:"ladders"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, env, "status", "--ladder", "fc", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if fc = st.Ladders[0].Forecast; fc.Messages != 3 || fc.EarliestMS <= 0 {
			return errors.New("not yet")
		}
		return nil
	})
	if fc.Messages != 3 || fc.Dest != "fc.done" || fc.LatestMS == nil || *fc.LatestMS != 255_000 {
		t.Fatalf("forecast %+v", fc)
	}
	// Published with a timestamp just now: the head is at most a few
	// seconds old, so nothing leaves the 128s rung within a minute.
	if fc.EarliestMS < 60_000 || fc.Due[0].Within != "1m" || fc.Due[0].Max != 0 || fc.Due[3].Min != 3 {
		t.Errorf("bounds: %+v", fc)
	}
	out := mustRun(t, env, "status", "--ladder", "fc")
	for _, want := range []string{"FORECAST  3 messages in flight to fc.done", "within 1m", "fc.rung.07"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
