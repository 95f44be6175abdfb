//go:build scale

package model

import "testing"

// TestConsoleBesideTenThousandQueues is TestConsoleReadsWhatItShows where
// the issue measured it: beside 10,000 other queues, a refresh with a
// ladder open still reads that ladder's queues alone. It loads the broker
// as broker's scale tests do, so it runs with them (go test -tags scale).
func TestConsoleBesideTenThousandQueues(t *testing.T) { consoleReadsWhatItShows(t, 10000) }
