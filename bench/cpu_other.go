//go:build !linux

package bench

import "time"

// processCPU reads another process's CPU time on Linux only.
func processCPU(int) (time.Duration, bool) { return 0, false }
