//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is an exited process's peak resident memory in bytes, 0 if the
// system does not say.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	// Linux counts kilobytes, macOS bytes.
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
