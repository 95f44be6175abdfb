package ops

import (
	"strings"
	"testing"
)

// Doctor reads the dead-letter worker's prefetch as far as the management
// API shows it: a node without an advanced.config runs the default, and
// doctor says what that costs and the change; a node with one may set it,
// and doctor says how to check; without a quorum ladder, or a node that
// listed no files, it says nothing.
func TestDoctorDeadLetterPrefetch(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"default", []string{"/etc/rabbitmq/rabbitmq.conf"}, []string{"node rabbit@a has no advanced.config", "at most 32", "2,220/s with 32 against 8,544/s with 512", "dead_letter_worker_consumer_prefetch, 512"}},
		{"advanced", []string{"/etc/rabbitmq/rabbitmq.conf", "/etc/rabbitmq/advanced.config"}, []string{"node rabbit@a reads an advanced.config", "application:get_env(rabbit, dead_letter_worker_consumer_prefetch)"}},
		{"unlisted", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := healthyFacts(t)
			f.Nodes[0].ConfigFiles = c.files
			fs := Judge(f)
			got, ok := find(fs, "dead-letter worker")
			if len(c.want) == 0 {
				if ok {
					t.Errorf("said %q", got.Text)
				}
				return
			}
			if !ok || got.Status != FindingInfo || got.Area != "broker" {
				t.Fatalf("finding %+v (found %v), want an info finding in broker", got, ok)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Text, w) {
					t.Errorf("%q lacks %q", got.Text, w)
				}
			}
		})
	}
	f := healthyFacts(t)
	f.Nodes[0].ConfigFiles = []string{"/etc/rabbitmq/rabbitmq.conf"}
	f.Vhosts = nil
	if got, ok := find(Judge(f), "dead-letter worker"); ok {
		t.Errorf("no quorum ladder, yet: %q", got.Text)
	}
}
