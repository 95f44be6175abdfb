package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// retryHold is a vhost's quorum queues under delayed retry: one a policy
// sets holding a storm's worth, one set by its arguments holding none,
// one with a long name, and one a 4.3.0 policy sets in vain.
func retryHold() health.RetryHold {
	return health.NewRetryHold([]topology.RetryQueue{
		{Name: "payments", Type: "failed", Min: time.Second, Source: "argument", Reported: true, LimitKnown: true, DeliveryLimit: 20},
		{Name: "orders", Type: "all", Min: 2 * time.Second, Max: 4 * time.Second, Source: "policy", Policy: "slow-retry", Delayed: 1200, Ready: 3, Reported: true, Consumers: 2},
		{Name: "notifications.email.transactional.high-priority.eu-west-1", Type: "returned", Min: 30 * time.Second, Max: 5 * time.Minute, Source: "operator policy", Policy: "ops", Delayed: 7, Unacked: 1, Reported: true},
		{Name: "legacy", Type: "all", Min: time.Second, Source: "policy", Policy: "old", Ignored: true, Reported: true},
	}, true)
}

func TestRetryTextGolden(t *testing.T) {
	h := retryHold()
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			out := RetryText(h, sz.w)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) > sz.h {
				t.Errorf("%d lines, want at most %d", len(lines), sz.h)
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > sz.w {
					t.Errorf("line wider than %d: %q", sz.w, l)
				}
			}
			// The queue holding the most comes first, its count beside it.
			first := ""
			for i, l := range lines {
				if strings.Contains(l, "QUEUE") && i+1 < len(lines) {
					first = lines[i+1]
				}
			}
			if !strings.Contains(first, "orders") || !strings.Contains(first, "1200") {
				t.Errorf("first row %q, want orders with 1200", first)
			}
			golden.RequireEqual(t, out)
		})
	}
	if RetryText(health.RetryHold{}, 80) != "" || RetryText(health.NewRetryHold(nil, true), 80) != "" {
		t.Error("nothing read, or no queue with delayed retry, still prints")
	}
}
