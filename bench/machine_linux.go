package bench

import "syscall"

// totalMemory is the machine's RAM in bytes (sysinfo(2)), or 0.
func totalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// loadAverages are the 1-, 5- and 15-minute load averages (sysinfo(2),
// fixed point with 16 fraction bits).
func loadAverages() ([3]float64, bool) {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return [3]float64{}, false
	}
	var l [3]float64
	for i, v := range si.Loads {
		l[i] = float64(v) / (1 << 16)
	}
	return l, true
}
