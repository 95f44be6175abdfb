package examples

import "testing"

func TestExampleChecks(t *testing.T) {
	for cmd, want := range map[string]bool{"exporter": true, "bench": true, "export": true, "help": true, "plan": false, "unstall": false, "": false} {
		if got := onlyParsed(cmd); got != want {
			t.Errorf("onlyParsed(%q) = %v", cmd, got)
		}
	}
	tests := []struct{ stderr, want string }{
		{"rungs: purge needs --yes\n", ""},
		{"rungs: dial tcp 127.0.0.1:1: connect: connection refused\n", ""},
		{"rungs: open job.json: no such file or directory\n", ""},
		{`rungs: no context "prod"` + "\n", ""},
		{"rungs: key 0f does not belong to this ladder\n", ""},
		{"rungs: --unit: bad duration\n", "rungs: --unit: bad duration"},
	}
	for _, tt := range tests {
		got := ""
		if err := refused(tt.stderr); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("refused(%q) = %q, want %q", tt.stderr, got, tt.want)
		}
	}
}
