package cli

import (
	"context"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker/brokertest"
)

// runPiped runs rungs with stdout and stderr as pipes, as `rungs … | cat`
// does, in an environment that claims a true-colour terminal.
func runPiped(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	env = maps.Clone(env)
	env["TERM"], env["COLORTERM"] = "xterm-256color", "truecolor"
	read := func() (*os.File, chan string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(r)
			r.Close()
			ch <- string(b)
		}()
		return w, ch
	}
	ow, oc := read()
	ew, ec := read()
	code = Run(context.Background(), args, IO{
		In: strings.NewReader(""), Out: ow, Err: ew,
		Getenv: func(k string) string { return env[k] },
	})
	ow.Close()
	ew.Close()
	return code, <-oc, <-ec
}

// Everything rungs prints to a pipe or a file is plain text: no escape
// byte, whatever the terminal variables say. status strikes the name of a
// deleted target (the ladder's done queue) through on a terminal; through a
// pipe it is the name.
func TestPipedOutputIsPlain(t *testing.T) {
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "plain", "--unit", "1s", "--max-delay", "1h", "--target", "plain.work")
	mustRun(t, env, "publish", "--ladder", "plain", "--delay", "30m", "--to", "plain.work", "--count", "3", "--id-prefix", "plain-")
	if code, _ := brokertest.MgmtRequest(t, cfg, "DELETE", "/api/queues/"+url.PathEscape(cfg.Vhost)+"/plain.done", ""); code/100 != 2 {
		t.Fatalf("delete plain.done: %d", code)
	}
	cases := [][]string{
		{"--help"}, {"version"}, {"status", "--help"},
		{"plan", "--ladder", "plain"},
		{"trace", "90s", "--ladder", "plain", "--to", "plain.work"},
		{"status"},
		{"status", "--ladder", "plain"},
		{"status", "--ladder", "plain", "--all"},
		{"discover"}, {"discover", "--delays"},
		{"doctor"}, {"doctor", "--target", "4.3"},
		{"scheduled", "--ladder", "plain"},
		{"scheduled", "--ladder", "plain", "--id", "plain-1"},
		{"peek", "plain.rung.01.1", "--force"},
		{"export", "--ladder", "plain"},
		{"publish", "--ladder", "plain", "--delay", "20m", "--to", "plain.work"},
		{"scheduled", "cancel", "--ladder", "plain", "--id", "plain-1", "--dry-run"},
		{"purge", "--ladder", "plain", "--dry-run"},
		{"frobnicate"}, // an error, on stderr
	}
	struck := false
	for _, args := range cases {
		code, out, errs := runPiped(t, env, args...)
		cmd := "rungs " + strings.Join(args, " ")
		if i := strings.IndexByte(out+errs, 0x1b); i >= 0 {
			s := out + errs
			t.Errorf("%s (exit %d) printed an escape byte to a pipe: %q", cmd, code, s[max(0, i-20):min(len(s), i+20)])
		}
		if out == "" && errs == "" {
			t.Errorf("%s printed nothing", cmd)
		}
		if args[0] == "status" && len(args) > 1 && regexp.MustCompile(`(?m)^\s+plain\.done\s.*missing`).MatchString(out) {
			struck = true
		}
	}
	if !struck {
		t.Error("status --ladder plain does not name the deleted target plain.done in plain text")
	}
}
