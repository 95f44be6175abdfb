package ui

import (
	"strings"

	"github.com/rungs-dev/rungs/health"
)

// StormText is the storm judged as one (health.Storm), wrapped to w, as
// status prints it under the ladders; "" when nothing waits.
func StormText(s health.Storm, w int) string {
	t := s.Text()
	if t == "" {
		return ""
	}
	if w <= 0 {
		w = 100
	}
	return strings.Join(wrap(t, w, ""), "\n") + "\n"
}
