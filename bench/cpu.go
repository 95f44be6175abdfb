package bench

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, which Linux
// fixes at 100 for user space on every architecture rungs builds for.
const userHZ = 100

// brokerCPU reads the CPU time (user + system) a local broker's process has
// used. On a shared machine throughput is noisy, but the broker's own CPU
// time per message is not disturbed by other programs' load, so the run
// reports both.
type brokerCPU struct {
	pid int
}

// findBrokerCPU finds the process listening on the AMQP URL's port, if the
// broker runs on this machine and /proc is readable; ok is false otherwise.
func findBrokerCPU(amqpURL string) (brokerCPU, bool) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return brokerCPU{}, false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
	default:
		return brokerCPU{}, false
	}
	port := 5672
	if u.Scheme == "amqps" {
		port = 5671
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return brokerCPU{}, false
		}
	}
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return brokerCPU{}, false
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
			if err == nil {
				c := brokerCPU{pid: pid}
				if _, ok := c.used(); ok {
					return c, true
				}
			}
		}
	}
	return brokerCPU{}, false
}

// listeningInodes are the socket inodes listening on port, from
// /proc/net/tcp and tcp6.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	suffix := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			// sl local rem st tx:rx tr:when retr uid timeout inode
			if len(fs) >= 10 && strings.HasSuffix(fs[1], suffix) && fs[3] == "0A" {
				out[fs[9]] = true
			}
		}
	}
	return out
}

// used is the process's CPU time so far.
func (c brokerCPU) used() (time.Duration, bool) {
	if c.pid == 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
	if err != nil {
		return 0, false
	}
	// The command name is in parentheses and may hold spaces: count fields
	// after the last ')'. utime and stime are fields 14 and 15 of the line.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fs := strings.Fields(s[i+1:])
	if len(fs) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(fs[11], 10, 64)
	st, err2 := strconv.ParseInt(fs[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / userHZ, true
}
