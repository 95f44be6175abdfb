package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
)

// celery runs Celery 5.5 (Debian trixie's python3-celery, with kombu's
// native delayed delivery) on testdata/celery/tasks.py, from the trixie
// root scripts/broker.sh builds: the real library, whatever release the
// broker under test is.
type celery struct {
	dir string
	env []string
}

func newCelery(t *testing.T, amqpURL, vhost string) *celery {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "celery", "tasks.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	u := strings.TrimSuffix(amqpURL, "/") + "/" + url.PathEscape(vhost)
	return &celery{dir: dir, env: []string{"BROKER_URL=" + u, "OUT=" + filepath.Join(dir, "ran.jsonl"), "RUNGS_RABBITMQ=4.0"}}
}

func (c *celery) command(args ...string) *exec.Cmd {
	cmd := exec.Command("bash", append([]string{"../scripts/broker.sh", "python", c.dir, filepath.Join(c.dir, "tasks.py")}, args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	return cmd
}

// worker starts a worker, stopped (SIGTERM, then SIGKILL) when the test
// ends; its log goes to worker.log.
func (c *celery) worker(t *testing.T) {
	t.Helper()
	log, err := os.Create(filepath.Join(c.dir, "worker.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.command("worker")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = log.Close()
	})
}

func (c *celery) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "worker.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// ran is what the worker ran: task id → when.
func (c *celery) ran(t *testing.T) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	b, err := os.ReadFile(filepath.Join(c.dir, "ran.jsonl"))
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r struct {
			ID string  `json:"id"`
			At float64 `json:"at"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out[r.ID] = time.Unix(0, int64(r.At*1e9))
	}
	return out
}

// TestCeleryWorkerThroughItsLadder runs a real Celery worker whose queue
// is a quorum queue, so that Celery delays tasks through its own ladder
// (celery_delayed_27..0), and checks what rungs tells its operator: the
// ladder is found as Celery's, every delayed task is listed by its task id
// with a due time from its eta, a cancelled task never runs, and the
// others run no earlier than listed. The due-time error is reported.
func TestCeleryWorkerThroughItsLadder(t *testing.T) {
	t.Parallel()
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	rungsEnv := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	c := newCelery(t, cfg.URL, cfg.Vhost)
	c.worker(t)
	// The worker declares the ladder and binds its queue when it starts
	// (the first start installs Celery into the root: a minute or two).
	testutil.Poll{Within: 5 * time.Minute, Every: 2 * time.Second}.Eventually(t, "the worker to declare Celery's ladder", func() error {
		r := rungs(t, rungsEnv, "discover")
		if strings.Contains(r.out, "celery") && strings.Contains(r.out, "emails") {
			return nil
		}
		return fmt.Errorf("discover: %s%s\nworker log:\n%s", r.out, r.errOut, c.logTail())
	})

	// The worker bound its queue as kombu does: doctor finds none of
	// Celery's known wiring faults (kombu #2252, an over-broad binding).
	if r := rungs(t, rungsEnv, "doctor", "--target", "4.3"); strings.Contains(r.out, "reaches no queue") ||
		strings.Contains(r.out, "binds nothing") || strings.Contains(r.out, "matches every delayed message") {
		t.Errorf("doctor faults a worker's own wiring:\n%s%s", r.out, r.errOut)
	}

	const n = 10
	spans := map[string]time.Duration{"soon": 30 * time.Second, "later": 60 * time.Second}
	sent := map[string]time.Time{}
	for prefix, d := range spans {
		sent[prefix] = time.Now()
		if out, err := c.command("publish", prefix, fmt.Sprint(n), fmt.Sprint(d.Seconds())).CombinedOutput(); err != nil {
			t.Fatalf("publish %s: %v\n%s", prefix, err, out)
		}
	}

	var list struct {
		Matched   int            `json:"matched"`
		Recounted int            `json:"recounted"`
		Bases     map[string]int `json:"bases"`
		Messages  []struct {
			TaskID string `json:"task_id"`
			Due    string `json:"due"`
			Exact  bool   `json:"exact"`
			Basis  string `json:"basis"`
			Why    string `json:"why"`
			Dest   string `json:"dest"`
		} `json:"messages"`
	}
	// Celery's rungs are quorum queues: before 4.3 reading them counts a
	// delivery, which the gate refuses without --force, as an operator
	// would then be told.
	out := mustRungs(t, rungsEnv, "scheduled", "--ladder", "celery", "--json", "--force")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// A task's due time comes from its eta, exactly, unless the ladder
	// already runs behind it: a message that cannot leave its rung before
	// its eta is listed with the window its rung allows and says it is
	// overdue (seen on a loaded 4.0.5), never with an eta it cannot keep.
	due := map[string]time.Time{}
	overdue := map[string]bool{}
	for _, m := range list.Messages {
		at, err := time.Parse(time.RFC3339Nano, m.Due)
		switch {
		case err != nil || m.Dest != "emails":
			t.Errorf("%s: due %q (%v), dest %s", m.TaskID, m.Due, err, m.Dest)
		case m.Basis == "eta" && m.Exact:
		case m.Basis == "none" && strings.HasPrefix(m.Why, "overdue: its eta"):
			overdue[m.TaskID] = true
		default:
			t.Errorf("%s: basis %s, exact %v (%s); want an exact due from eta, or overdue", m.TaskID, m.Basis, m.Exact, m.Why)
		}
		due[m.TaskID] = at
	}
	// Every task is listed once. A task that moved down a rung while the
	// scan read the rungs between is met twice and counted once (on a
	// loaded 3.10.8 a scan once listed 29 messages for these 20 tasks).
	if list.Matched != 2*n || len(due) != 2*n {
		t.Fatalf("listed %d (%d by task id, %d met again and counted once) of %d delayed tasks:\n%s", list.Matched, len(due), list.Recounted, 2*n, out)
	}
	if list.Recounted > 0 {
		t.Logf("%d tasks met again in a lower rung, counted once", list.Recounted)
	}
	for prefix, d := range spans {
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			if at, ok := due[id]; !ok || !overdue[id] && at.Before(sent[prefix].Add(d-2*time.Second)) || at.After(time.Now().Add(d+2*time.Second)) {
				t.Errorf("%s listed due %s; sent at %s with a countdown of %s", id, at.Format(time.RFC3339Nano), sent[prefix].Format(time.RFC3339Nano), d)
			}
		}
	}

	// "The customer paid": cancel one task by its id.
	cancelled := "later-3"
	out = mustRungs(t, rungsEnv, "scheduled", "cancel", "--ladder", "celery", "--id", cancelled, "--yes", "--json", "--force")
	var act struct {
		Acted int `json:"acted"`
	}
	if err := json.Unmarshal([]byte(out), &act); err != nil || act.Acted != 1 {
		t.Fatalf("cancel %s: %v\n%s", cancelled, err, out)
	}

	var ran map[string]time.Time
	testutil.Poll{Within: 3 * time.Minute, Every: time.Second}.Eventually(t, "the worker to run every task but the cancelled one", func() error {
		ran = c.ran(t)
		if len(ran) >= 2*n-1 {
			return nil
		}
		return fmt.Errorf("ran %d of %d\nworker log:\n%s", len(ran), 2*n-1, c.logTail())
	})
	// A quiet spell: the cancelled task must not run after the others.
	time.Sleep(5 * time.Second)
	ran = c.ran(t)
	if _, ok := ran[cancelled]; ok {
		t.Errorf("%s was cancelled and ran", cancelled)
	}
	var errs []time.Duration
	for id, at := range ran {
		want, ok := due[id]
		if !ok {
			t.Errorf("%s ran and was never listed", id)
			continue
		}
		e := at.Sub(want)
		errs = append(errs, e)
		if e < -time.Second {
			t.Errorf("%s ran %s before its listed due time", id, -e)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i] < errs[j] })
	if len(errs) > 0 {
		t.Logf("FIGURES celery: %d tasks listed (%d dated by eta, %d overdue), 1 cancelled and never run, %d ran; run time minus listed due: min %s, p50 %s, max %s",
			len(due), len(due)-len(overdue), len(overdue), len(ran), errs[0].Round(time.Millisecond), errs[len(errs)/2].Round(time.Millisecond), errs[len(errs)-1].Round(time.Millisecond))
	}
}
