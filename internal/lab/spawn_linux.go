package lab

import (
	"os"
	"syscall"
)

// childAttr: the child does not outlive a spawner the lab's context
// killed.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// peakRSS is an ended child's ru_maxrss in bytes (Linux counts kB).
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

func closeOnExec(f *os.File) { syscall.CloseOnExec(int(f.Fd())) }
