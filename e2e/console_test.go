package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
)

// term is one tmux session running a command.
type term struct {
	t    *testing.T
	name string
}

func newTerm(t *testing.T, w, h int, env []string, command string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed for the console test (scripts/test.sh installs it): %v", err)
	}
	name := uniqueName("rungs-e2e")
	args := []string{"new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, command)
	if out, err := tmux(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = tmux("kill-session", "-t", name).Run() })
	return &term{t, name}
}

func (m *term) screen() string {
	out, err := tmux("capture-pane", "-p", "-t", m.name).Output()
	if err != nil {
		m.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

func (m *term) keys(keys ...string) {
	m.t.Helper()
	if out, err := tmux(append([]string{"send-keys", "-t", m.name}, keys...)...).CombinedOutput(); err != nil {
		m.t.Fatalf("send-keys %v: %v\n%s", keys, err, out)
	}
}

// typeText sends literal text, one key at a time as a person types.
func (m *term) typeText(s string) {
	m.t.Helper()
	if out, err := tmux("send-keys", "-t", m.name, "-l", s).CombinedOutput(); err != nil {
		m.t.Fatalf("send-keys -l %q: %v\n%s", s, err, out)
	}
}

// screenPoll is how often a wait looks at the screen: a capture is cheap.
const screenPoll = 100 * time.Millisecond

// waitFor polls the screen until re matches, failing with the last screen.
func (m *term) waitFor(what string, re *regexp.Regexp, within time.Duration) string {
	m.t.Helper()
	var s string
	testutil.Poll{Within: within, Every: screenPoll}.Eventually(m.t, what, func() error {
		if s = m.screen(); re.MatchString(s) {
			return nil
		}
		return errors.New("the screen shows:\n" + s)
	})
	return s
}

// waitGone polls the screen until re no longer matches.
func (m *term) waitGone(what string, re *regexp.Regexp, within time.Duration) {
	m.t.Helper()
	testutil.Poll{Within: within, Every: screenPoll}.Eventually(m.t, what+" to go", func() error {
		if s := m.screen(); re.MatchString(s) {
			return errors.New("the screen shows:\n" + s)
		}
		return nil
	})
}

func text(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }

func TestConsoleEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	bin := rungsBinary(t)
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	apply := exec.Command(bin, "apply", "--ladder", "e2e", "--unit", "1s", "--levels", "8", "--radix", "2")
	apply.Env = append(os.Environ(), env...)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}

	// The shell line after rungs exits proves the terminal was given back.
	m := newTerm(t, 100, 30, env, fmt.Sprintf("%s --ladder e2e --refresh 1s; echo rungs-exit=$?; sleep 60", bin))
	m.waitFor("the ladder view", text("ladders › e2e"), 20*time.Second)

	// Publish five messages of 40s through the form: they wait in rung 05 (32s).
	m.keys("p")
	m.waitFor("the publish form", text("Publish into e2e"), 5*time.Second)
	m.typeText("40s")
	m.keys("Tab", "Tab", "Tab", "Tab")
	m.keys("BSpace")
	m.typeText("5")
	m.keys("Enter")
	m.waitFor("the publish result", text("published 5"), 15*time.Second)

	// The depth changes once the broker's statistics catch up.
	m.waitFor("rung 05 holding the 5 messages", regexp.MustCompile(`e2e\.rung\.05\s+32s\s+5\s`), 20*time.Second)

	// Trace a delay: its hops are marked and the key is shown.
	m.keys("t")
	m.typeText("45s")
	s := m.waitFor("the trace", text("trace 45s → e2e.done"), 5*time.Second)
	if !strings.Contains(s, "0.0.1.0.1.1.0.1") {
		t.Errorf("trace shows no routing key:\n%s", s)
	}
	m.keys("Escape")
	// An escape followed at once by a key reads as alt+key to any terminal
	// program; a person's next keystroke comes later.
	time.Sleep(300 * time.Millisecond)
	m.waitGone("the trace prompt", text("trace› "), 5*time.Second)

	// Purge the whole ladder: it names what is lost and wants the name typed.
	m.keys("X")
	m.waitFor("the purge confirmation", text("Purge the whole ladder e2e?"), 5*time.Second)
	m.keys("Enter") // nothing typed: refused
	m.typeText("e2e")
	m.keys("Enter")
	m.waitFor("the purge result", regexp.MustCompile(`purged 5 messages?`), 15*time.Second)

	m.keys("q")
	m.waitFor("a clean exit and the shell back", text("rungs-exit=0"), 10*time.Second)

	// And the broker agrees, once its statistics catch up (every 5s).
	mgmt := brokertest.Require(t).Mgmt
	testutil.Poll{Within: 15 * time.Second, Every: 500 * time.Millisecond}.Eventually(t, "e2e.rung.05 to report 0 ready after the purge", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, err := mgmt.Stats(ctx, cfg.Vhost)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range st {
			if q.Name != "e2e.rung.05" {
				continue
			}
			if q.Stats.Ready > 0 {
				return fmt.Errorf("e2e.rung.05 reports %d ready", q.Stats.Ready)
			}
			return nil
		}
		return errors.New("no e2e.rung.05")
	})
}
