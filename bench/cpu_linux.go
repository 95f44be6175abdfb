package bench

import (
	"syscall"
	"time"
	"unsafe"
)

// processCPU is pid's CPU time (all its threads, user and system) from its
// process CPU clock (clock_getcpuclockid(3): CPUCLOCK_SCHED of the pid),
// the scheduler's exact runtime, without reading /proc.
func processCPU(pid int) (time.Duration, bool) {
	const cpuclockSched = 2
	id := (^int64(pid))<<3 | cpuclockSched
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(id), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
