package lab

import (
	"bufio"
	"os"
	"strings"

	"github.com/rungs-dev/rungs/bench"
)

// startRun is bench.StartRun with the CPU's model, which the rungs binary
// does not read (it reads no /proc) and a lab report names.
func startRun() bench.RunInfo {
	r := bench.StartRun()
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		r.Machine.CPU = v
	}
	return r
}

// procField returns the first "key : value" line's value of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
