package testutil

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// DefaultParallel sets -test.parallel to n unless the command line set it;
// call it from TestMain before m.Run. Go's default is GOMAXPROCS, which on
// the two-core CI machine runs a package's parallel tests two at a time,
// though the broker-backed ones spend their time waiting for TTLs, confirms
// and management requests, not computing: cli's and ops' tests then queued
// behind two 25 s delay-inventory tests and a 2 min scheduled-message test.
func DefaultParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// Main is a package's whole TestMain when it needs nothing else: its
// parallel tests run n at a time (DefaultParallel), and the process exits
// with the tests' status. cli, ops and broker run 4: 8 made 3.10.8's
// quorum declares time out in a full run.
func Main(m *testing.M, n int) {
	DefaultParallel(n)
	os.Exit(m.Run())
}
