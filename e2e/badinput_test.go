package e2e

// Bad input and abuse, against the real broker: every case gets one clear
// line of error and leaves the broker as it was (declarations, the depth
// of every queue, the vhosts), compared before and after each case.
// Passwords never show, --read-only is refused below the UI, and the
// destructive commands want --yes or the name typed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/cli"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/model"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

// cliRun runs rungs in-process with an environment of its own.
func cliRun(env map[string]string, in string, interactive bool, args ...string) result {
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, cli.IO{
		In: strings.NewReader(in), Out: &out, Err: &errb, Interactive: interactive,
		Getenv: func(k string) string { return env[k] },
	})
	return result{code: code, out: out.String(), errOut: errb.String()}
}

// brokerState describes a vhost for before/after comparisons: every
// declaration, the exact depth and consumer count of every queue (read
// with passive declarations, which the management API's statistics lag
// behind), and the broker's vhosts.
func brokerState(t *testing.T, env brokertest.Env, cfg broker.Config) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(definitions(t, cfg), ";", "\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	snap, err := env.Mgmt.Snapshot(ctx, cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Vhost: cfg.Vhost})
	if err != nil {
		t.Fatalf("dial %s: %v", cfg.Vhost, err)
	}
	defer conn.Close()
	for _, q := range snap.Queues {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ch.QueueDeclarePassive(q.Name, q.Durable, q.AutoDelete, false, false, nil)
		if err != nil {
			t.Fatalf("passive declare %s: %v", q.Name, err)
		}
		fmt.Fprintf(&b, "\n%s: %d ready, %d consumers", q.Name, got.Messages, got.Consumers)
		ch.Close()
	}
	vhosts, err := env.Mgmt.Vhosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Other tests' vhosts come and go; the cases must not add the one
	// they name.
	for _, v := range vhosts {
		if v == noSuchVhost {
			b.WriteString("\nvhost " + v + " exists")
		}
	}
	return b.String()
}

// noSuchVhost is the vhost the cases name that must not exist.
const noSuchVhost = "rungs-no-such-vhost"

// badInputFixture is a vhost holding a 12-level ladder "bad" with a
// destination queue, three messages parked in its 34-minute rung, one in
// its unroutable queue, and a foreign queue named like a rung of a ladder
// "foreign" (and like rung 15 of a taller "bad").
func badInputFixture(t *testing.T) (brokertest.Env, broker.Config, map[string]string) {
	t.Helper()
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	vars := map[string]string{"RUNGS_URL": cfg.URL, "RUNGS_MGMT_URL": cfg.MgmtURL, "RUNGS_VHOST": cfg.Vhost}
	for _, args := range [][]string{
		{"apply", "--ladder", "bad", "--unit", "1s", "--levels", "12", "--radix", "2", "--target", "work", "--queue-type", "classic"},
		{"publish", "--ladder", "bad", "--delay", "1h", "--count", "3"},
	} {
		if r := cliRun(vars, "", false, args...); r.code != 0 {
			t.Fatalf("rungs %v: exit %d\n%s%s", args, r.code, r.out, r.errOut)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if res, err := conn.Publish(ctx, []broker.Message{{Exchange: "bad.ingest", RoutingKey: "banana"}}); err != nil || res.Confirmed != 1 {
		t.Fatalf("park a message in bad.unroutable: %+v %v", res, err)
	}
	foreign := topology.Plan{Queues: []topology.Queue{{Name: "foreign.rung.03", Durable: true}, {Name: "bad.rung.15", Durable: true}}}
	if _, err := conn.Apply(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	return env, cfg, vars
}

// badCase is one bad input on the command line.
type badCase struct {
	args []string
	code int // the exit code: 1 error, 2 bad input
	want string
	// in is typed at the (pretend) terminal; interactive says stdin is one.
	in          string
	interactive bool
	// url, mgmtURL, vhost replace the environment's when set.
	url, mgmtURL string
}

// TestBadInput is the table: command-line cases run through the CLI
// in-process, console cases through the console's model with real broker
// clients, each one checked against the broker's state before and after.
func TestBadInput(t *testing.T) {
	t.Parallel()
	env, cfg, vars := badInputFixture(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(cli.MaxBody + 1); err != nil { // sparse: no disk spent
		t.Fatal(err)
	}
	f.Close()
	binary := filepath.Join(dir, "binary.bin")
	if err := os.WriteFile(binary, []byte{0xff, 0xfe, 0x00, 0x80}, 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("q", 250)
	mgmtHost := hostPort(t, cfg.MgmtURL)
	amqpHost := hostPort(t, cfg.URL)

	cases := map[string]badCase{
		// Delays.
		"a bare number is no delay":   {args: []string{"publish", "--ladder", "bad", "--delay", "15"}, code: 2, want: `"15" has no unit`},
		"a delay missing its unit":    {args: []string{"publish", "--ladder", "bad", "--delay", "1h30"}, code: 2, want: "has no unit"},
		"a delay in words":            {args: []string{"publish", "--ladder", "bad", "--delay", "ninety seconds"}, code: 2, want: "invalid delay"},
		"a negative delay":            {args: []string{"publish", "--ladder", "bad", "--delay", "-5s"}, code: 2, want: "--delay"},
		"a delay no duration holds":   {args: []string{"publish", "--ladder", "bad", "--delay", "9999999999d"}, code: 2, want: "too long"},
		"a delay over the maximum":    {args: []string{"publish", "--ladder", "bad", "--delay", "2h"}, code: 2, want: "exceeds"},
		"a trace over the maximum":    {args: []string{"trace", "3h", "--ladder", "bad"}, code: 2, want: "exceeds"},
		"a unit below a millisecond":  {args: []string{"apply", "--ladder", "fine", "--unit", "500us"}, code: 2, want: "below the 1ms resolution"},
		"a max-delay nothing can fit": {args: []string{"apply", "--ladder", "fine", "--unit", "1ms", "--max-delay", "9999999999w"}, code: 2, want: "--max-delay"},
		"a count that overflows":      {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--count", "99999999999999999999"}, code: 2, want: "out of range"},
		"a timeout in words":          {args: []string{"status", "--timeout", "soon"}, code: 2, want: `invalid argument "soon" for "--timeout"`},

		// URLs and credentials.
		"a URL that does not parse":    {args: []string{"status"}, url: "amqp://guest:guest@[bad", code: 1, want: "cannot be parsed"},
		"an AMQP URL of another kind":  {args: []string{"apply", "--ladder", "fine"}, url: "http://guest:guest@" + amqpHost + "/", code: 1, want: "scheme must be amqp or amqps"},
		"a management URL not http":    {args: []string{"status"}, mgmtURL: "ftp://" + mgmtHost, code: 1, want: "scheme must be http or https"},
		"a port that is not a number":  {args: []string{"apply", "--ladder", "fine"}, url: "amqp://guest:guest@127.0.0.1:port/", code: 1, want: "cannot be parsed"},
		"a URL with a space":           {args: []string{"status"}, mgmtURL: "http://" + mgmtHost + "/ api", code: 1, want: "contains whitespace"},
		"a wrong password, AMQP":       {args: []string{"apply", "--ladder", "fine"}, url: "amqp://guest:wrong-pw@" + amqpHost + "/", code: 1, want: "username or password not allowed"},
		"a wrong password, management": {args: []string{"status"}, mgmtURL: "http://guest:wrong-pw@" + mgmtHost, code: 1, want: "401 Unauthorized"},
		"an unknown user":              {args: []string{"publish", "--ladder", "bad", "--delay", "1s"}, url: "amqp://nobody:x-pw@" + amqpHost + "/", mgmtURL: "http://nobody:x-pw@" + mgmtHost, code: 1, want: "username or password not allowed"},

		// Unknown vhost, ladder, queue.
		"an unknown vhost, management": {args: []string{"status", "--vhost", noSuchVhost}, code: 1, want: "vhost_not_found"},
		"an unknown vhost, AMQP":       {args: []string{"apply", "--ladder", "fine", "--vhost", noSuchVhost}, code: 1, want: "vhost " + noSuchVhost + " not found"},
		"an unknown vhost, publish":    {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--vhost", noSuchVhost}, code: 1, want: "vhost"},
		"an unknown ladder, status":    {args: []string{"status", "--ladder", "ghost"}, code: 1, want: `no ladder "ghost"`},
		"an unknown ladder, publish":   {args: []string{"publish", "--ladder", "ghost", "--delay", "1s"}, code: 1, want: `no ladder "ghost"`},
		"an unknown ladder, purge":     {args: []string{"purge", "--ladder", "ghost", "--yes"}, code: 1, want: `no ladder "ghost"`},
		"an unknown ladder, teardown":  {args: []string{"teardown", "--ladder", "ghost", "--yes"}, code: 1, want: `no ladder "ghost"`},
		"an unknown queue, purge":      {args: []string{"purge", "no-such-queue", "--yes"}, code: 1, want: `no queue "no-such-queue"`},
		"a destination nobody bound":   {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--to", "nobody"}, code: 1, want: "nothing published"},

		// Existing queues that conflict.
		"another unit on existing rungs":    {args: []string{"apply", "--ladder", "bad", "--unit", "2s", "--levels", "12", "--radix", "2"}, code: 1, want: "already exists in vhost"},
		"another queue type":                {args: []string{"apply", "--ladder", "bad", "--levels", "12", "--radix", "2", "--queue-type", "quorum"}, code: 1, want: "nothing was declared"},
		"a foreign queue named like a rung": {args: []string{"apply", "--ladder", "foreign", "--levels", "4", "--radix", "2"}, code: 1, want: "queue foreign.rung.03 exists with other arguments"},
		"growing into a foreign rung":       {args: []string{"apply", "--ladder", "bad", "--levels", "16", "--radix", "2"}, code: 1, want: "as 12 levels of 1s, radix 2, classic"},
		"a lone foreign rung is no ladder":  {args: []string{"purge", "--ladder", "foreign", "--yes"}, code: 1, want: `no ladder "foreign"`},

		// Sizes and encodings.
		"an oversized body":                {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--body", "@" + big}, code: 2, want: "the broker accepts at most"},
		"an oversized routing key":         {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--to", long}, code: 2, want: "longer than 255 bytes"},
		"an oversized header name":         {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--header", strings.Repeat("h", 256) + "=v"}, code: 2, want: "AMQP allows at most 255"},
		"an oversized ladder name":         {args: []string{"apply", "--ladder", strings.Repeat("l", 201)}, code: 2, want: "queue names are limited"},
		"a non-UTF-8 body said to be text": {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--body", "@" + binary, "--content-type", "application/json"}, code: 2, want: "not valid UTF-8"},
		"a non-UTF-8 ladder name":          {args: []string{"apply", "--ladder", "bad\xff"}, code: 2, want: "not valid UTF-8"},
		"a non-UTF-8 destination":          {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--to", "work\xfe"}, code: 2, want: "not valid UTF-8"},
		"a wildcard in a ladder name":      {args: []string{"apply", "--ladder", "bad#"}, code: 2, want: "topic wildcard"},
		"a wildcard in a destination":      {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--to", "work.*"}, code: 2, want: "topic wildcard"},

		// Destruction wants consent; read-only refuses.
		"purge from a script without --yes":    {args: []string{"purge", "--ladder", "bad"}, code: 2, want: "needs --yes"},
		"teardown from a script without --yes": {args: []string{"teardown", "--ladder", "bad"}, code: 2, want: "needs --yes"},
		"purge confirmed with the wrong name":  {args: []string{"purge", "bad.unroutable"}, in: "bad\n", interactive: true, code: 2, want: "not confirmed"},
		"teardown confirmed with nothing":      {args: []string{"teardown", "--ladder", "bad"}, in: "\n", interactive: true, code: 2, want: "not confirmed"},
		"read-only apply":                      {args: []string{"apply", "--ladder", "fine", "--read-only"}, code: 1, want: "read-only"},
		"read-only publish":                    {args: []string{"publish", "--ladder", "bad", "--delay", "1s", "--read-only"}, code: 1, want: "read-only"},
		"read-only purge with --yes":           {args: []string{"purge", "bad.unroutable", "--yes", "--read-only"}, code: 1, want: "read-only"},
		"read-only teardown with --yes":        {args: []string{"teardown", "--ladder", "bad", "--yes", "--read-only"}, code: 1, want: "read-only"},

		// Replay moves messages: it wants consent and a sound route.
		"replay from a script without --yes":   {args: []string{"replay", "--from", "bad.unroutable", "--to-queue", "work"}, code: 2, want: "needs --yes"},
		"read-only replay with --yes":          {args: []string{"replay", "--from", "bad.unroutable", "--to-queue", "work", "--yes", "--read-only"}, code: 1, want: "read-only"},
		"replay from an unknown queue":         {args: []string{"replay", "--from", "no-such-queue", "--to-queue", "work", "--yes"}, code: 1, want: `no queue "no-such-queue"`},
		"replay into an unknown queue":         {args: []string{"replay", "--from", "bad.unroutable", "--to-queue", "no-such-queue", "--yes"}, code: 1, want: `no queue "no-such-queue"`},
		"replay into the source":               {args: []string{"replay", "--from", "bad.unroutable", "--to-queue", "bad.unroutable", "--yes"}, code: 2, want: "is the source queue"},
		"replay over the ladder's maximum":     {args: []string{"replay", "--from", "bad.unroutable", "--to-ladder", "bad", "--delay", "2h", "--yes"}, code: 2, want: "exceeds"},
		"replay with a bare-number delay":      {args: []string{"replay", "--from", "bad.unroutable", "--to-ladder", "bad", "--delay", "30", "--yes"}, code: 2, want: "has no unit"},
		"replay to a destination nobody bound": {args: []string{"replay", "--from", "bad.unroutable", "--to-ladder", "bad", "--delay", "5s", "--to", "nobody", "--yes"}, code: 1, want: "nothing replayed"},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	state := brokerState(t, env, cfg)
	for _, name := range names {
		tc := cases[name]
		t.Run("cli/"+name, func(t *testing.T) {
			v := map[string]string{}
			for k, val := range vars {
				v[k] = val
			}
			if tc.url != "" {
				v["RUNGS_URL"] = tc.url
			}
			if tc.mgmtURL != "" {
				v["RUNGS_MGMT_URL"] = tc.mgmtURL
			}
			r := cliRun(v, tc.in, tc.interactive, append(tc.args, "--timeout", "5s")...)
			line := strings.TrimRight(r.errOut, "\n")
			if tc.interactive {
				// The question comes first; the verdict follows the prompt.
				_, line, _ = strings.Cut(line[strings.LastIndex(line, "\n")+1:], "to confirm: ")
			}
			switch {
			case r.code != tc.code:
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.out, r.errOut)
			case strings.Contains(line, "\n") || !strings.HasPrefix(line, "rungs: "):
				t.Errorf("want one error line starting with 'rungs: ', got:\n%s", r.errOut)
			case !strings.Contains(line, tc.want):
				t.Errorf("the error does not say %q:\n%s", tc.want, line)
			case r.out != "":
				t.Errorf("printed to stdout:\n%s", r.out)
			}
			for _, pw := range []string{"wrong-pw", "x-pw", "guest:guest"} {
				if strings.Contains(r.out+r.errOut, pw) {
					t.Errorf("printed a password (%s):\n%s%s", pw, r.out, r.errOut)
				}
			}
			if after := brokerState(t, env, cfg); after != state {
				t.Errorf("the broker changed: %s", stateDiff(state, after))
				state = after
			}
		})
	}

	// Below the CLI: a name RabbitMQ cannot read closes the connection.
	// The engine must say so at once, not resend it after every reconnect
	// until its deadline, and the connection must come back for the next
	// request.
	t.Run("engine/a queue name that is not UTF-8", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := broker.Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		_, err = conn.Apply(ctx, topology.Plan{Queues: []topology.Queue{{Name: "bad\xff", Durable: true}}})
		if err == nil || !strings.Contains(err.Error(), "FRAME_ERROR") || strings.Contains(err.Error(), "deadline") {
			t.Errorf("Apply with a non-UTF-8 name = %v, want the broker's FRAME_ERROR at once", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the refusal took %s", took)
		}
		// Declaring an existing queue as it is changes nothing.
		if _, err := conn.Apply(ctx, topology.Plan{Queues: []topology.Queue{{Name: "work", Durable: true}}}); err != nil {
			t.Errorf("the connection did not come back: %v", err)
		}
		if after := brokerState(t, env, cfg); after != state {
			t.Errorf("the broker changed: %s", stateDiff(state, after))
			state = after
		}
	})

	// The console's forms and command line, through its model with real
	// broker clients.
	consoleCases := map[string]struct {
		keys []string // keys; a key of more than one rune is typed as text unless it names a key
		want string
	}{
		"form: a bare number":              {[]string{"p", "15", "enter"}, "has no unit"},
		"form: over the maximum":           {[]string{"p", "2h", "enter"}, "exceeds"},
		"form: a wildcard destination":     {[]string{"p", "5s", "tab", "a.#", "enter"}, "topic wildcard"},
		"form: a destination nobody bound": {[]string{"p", "5s", "tab", "nobody", "enter"}, "would not reach nobody"},
		"form: a key too long":             {[]string{"p", "5s", "tab", long, "enter"}, "longer than 255 bytes"},
		"form: count zero":                 {[]string{"p", "5s", "tab", "tab", "tab", "tab", "0", "enter"}, `count: "0" is not a number from 1 to`},
		"form: count over the limit":       {[]string{"p", "5s", "tab", "tab", "tab", "tab", "99999", "enter"}, `count: "99999" is not a number from 1 to`},
		"form: a header without value":     {[]string{"p", "5s", "tab", "tab", "tab", "novalue", "enter"}, `"novalue" is not key=value`},
		":trace over the maximum":          {[]string{":", "trace 3h", "enter"}, "exceeds"},
		":purge an unknown queue":          {[]string{":", "purge no-such-queue", "enter"}, `no queue or ladder "no-such-queue"`},
		":ladder an unknown ladder":        {[]string{":", "ladder ghost", "enter"}, `no ladder "ghost"`},
		":publish with a bad count":        {[]string{":", "publish 1s work many", "enter"}, `count "many" is not a positive number`},
		":refresh faster than 1s":          {[]string{":", "refresh 10ms", "enter"}, "want a duration of at least 1s"},
		"an unknown command":               {[]string{":", "frobnicate", "enter"}, `unknown command "frobnicate"`},
		"purge all, the wrong name":        {[]string{"X", "bax", "enter"}, "type bad exactly"},
	}
	names = names[:0]
	for name := range consoleCases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := consoleCases[name]
		t.Run("console/"+name, func(t *testing.T) {
			c := openConsole(t, cfg, "bad", false)
			c.press(tc.keys...)
			if err := c.waitFor(tc.want); err != nil {
				t.Errorf("the console does not say %q: %v", tc.want, err)
			}
			if after := brokerState(t, env, cfg); after != state {
				t.Errorf("the broker changed: %s", stateDiff(state, after))
				state = after
			}
		})
	}
}

// console drives the console's model in-process against real broker
// clients. Commands run in goroutines, as Bubble Tea runs them, and their
// messages are fed back on the test's goroutine.
type console struct {
	t    *testing.T
	app  tea.Model
	msgs chan tea.Msg
}

func openConsole(t *testing.T, cfg broker.Config, ladder string, readOnlyUI bool) *console {
	t.Helper()
	mgmt, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &console{t: t, msgs: make(chan tea.Msg, 1024)}
	c.app = model.New(model.Options{
		Backends: model.Backends{
			Inspector: mgmt, Publisher: conn, Purger: conn, Conn: conn, Vhost: cfg.Vhost,
			BrokerLabel: "guest@broker", ReadOnly: readOnlyUI,
		},
		Refresh: time.Hour, Ladder: ladder,
	})
	c.update(tea.WindowSizeMsg{Width: 200, Height: 50})
	c.exec(c.app.Init())
	testutil.Eventually(t, 15*time.Second, "the console to open "+ladder, func() error {
		if s := c.screen(); !strings.Contains(s, "ladders › "+ladder) {
			c.settle(50 * time.Millisecond)
			return errors.New("the screen shows:\n" + s)
		}
		return nil
	})
	return c
}

func (c *console) update(msg tea.Msg) {
	var cmd tea.Cmd
	c.app, cmd = c.app.Update(msg)
	c.exec(cmd)
}

// exec runs a command off the test's goroutine; ticks that never come in
// time simply never report.
func (c *console) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, cmd := range b {
				c.exec(cmd)
			}
			return
		}
		if msg != nil {
			c.msgs <- msg
		}
	}()
}

// settle feeds the commands' messages back for d.
func (c *console) settle(d time.Duration) {
	end := time.After(d)
	for {
		select {
		case msg := <-c.msgs:
			c.update(msg)
		case <-end:
			return
		}
	}
}

// press sends keys: "enter", "tab", "esc" or a single rune, else text typed
// rune by rune.
func (c *console) press(keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			c.update(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "tab":
			c.update(tea.KeyPressMsg{Code: tea.KeyTab})
		case "esc":
			c.update(tea.KeyPressMsg{Code: tea.KeyEscape})
		default:
			for _, r := range k {
				c.update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
		c.settle(20 * time.Millisecond)
	}
}

func (c *console) screen() string { return ansi.Strip(c.app.View().Content) }

// waitFor feeds the commands' messages back until the screen shows want,
// and returns the last screen if it never does.
func (c *console) waitFor(want string) error {
	return testutil.Until(c.t, 15*time.Second, func() error {
		c.settle(20 * time.Millisecond)
		if s := c.screen(); !strings.Contains(s, want) {
			return errors.New("the screen shows:\n" + s)
		}
		return nil
	})
}

// TestReadOnlyBelowTheUI gives a console whose UI allows everything a
// read-only broker client: publishing and purging are refused by the
// engine, with exact counts, and the broker is unchanged.
func TestReadOnlyBelowTheUI(t *testing.T) {
	t.Parallel()
	env, cfg, _ := badInputFixture(t)
	before := brokerState(t, env, cfg)
	ro := cfg
	ro.ReadOnly = true
	c := openConsole(t, ro, "bad", false)

	c.press("p", "5s", "enter")
	if err := c.waitFor("refused: the broker client is read-only"); err != nil {
		t.Errorf("publish through a read-only client: %v", err)
	}
	// The publish's refusal stays in the header, so the screen cannot
	// tell when the purge has run: it gets a second to run and refuse,
	// and the broker's state below says whether it changed anything.
	c.press("X", "bad", "enter")
	c.settle(time.Second)
	if s := c.screen(); !strings.Contains(s, "refused: the broker client is read-only") {
		t.Errorf("purge through a read-only client:\n%s", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.EnsureQueue(ctx, "new-destination", topology.Classic); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("EnsureQueue through a read-only client = %v", err)
	}
	// The replay engine and the retry library refuse too.
	if _, err := conn.Move(ctx, broker.MoveOptions{Source: "bad.unroutable", Route: broker.ToQueue("work")}); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("Move through a read-only client = %v", err)
	}
	l, err := topology.Ladder{Name: "bad", Vhost: cfg.Vhost, Unit: time.Second, Levels: 12, Radix: 2, QueueType: topology.Classic, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(conn, l, "work", "", retry.Policy{MaxAttempts: 3, Steps: []time.Duration{time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Retry(ctx, broker.Delivery{MessageID: "job-1", Body: []byte("{}")}, errors.New("boom")); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("Retry through a read-only client = %v", err)
	}
	if after := brokerState(t, env, cfg); after != before {
		t.Errorf("the broker changed: %s", stateDiff(before, after))
	}
}

// stateDiff lists the lines of two states that differ.
func stateDiff(before, after string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	b, a := in(before), in(after)
	var out []string
	for _, l := range strings.Split(before, "\n") {
		if !a[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(after, "\n") {
		if !b[l] {
			out = append(out, "+ "+l)
		}
	}
	return "\n" + strings.Join(out, "\n")
}

// mgmtCall sends one request to the management API as the test broker's
// administrator, and fails the test on an error status.
func mgmtCall(t *testing.T, cfg broker.Config, method, path, body string) {
	t.Helper()
	if status, msg := brokertest.MgmtRequest(t, cfg, method, path, body); status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, status, msg)
	}
}

// TestPasswordsNeverShown runs every command, in success and error paths,
// and the console, with a password that must never appear in any output.
func TestPasswordsNeverShown(t *testing.T) {
	t.Parallel()
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	user := "rungs-mask-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	const pw = "Sw0rdf1sh/p@ss:w%rd?x" // every character a URL must escape
	const wrong = "Wr0ngSw0rdf1sh"
	secrets := []string{pw, url.QueryEscape(pw), url.PathEscape(pw), "Sw0rdf1sh", wrong}
	mgmtCall(t, cfg, http.MethodPut, "/api/users/"+user, fmt.Sprintf(`{"password":%q,"tags":"management"}`, pw))
	t.Cleanup(func() { mgmtCall(t, cfg, http.MethodDelete, "/api/users/"+user, "") })
	mgmtCall(t, cfg, http.MethodPut, "/api/permissions/"+url.PathEscape(cfg.Vhost)+"/"+user, `{"configure":".*","write":".*","read":".*"}`)

	withPW := func(raw, password string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, password)
		return u.String()
	}
	amqpURL, mgmtURL := withPW(cfg.URL, pw), withPW(cfg.MgmtURL, pw)
	good := map[string]string{"RUNGS_URL": amqpURL, "RUNGS_MGMT_URL": cfg.MgmtURL, "RUNGS_VHOST": cfg.Vhost}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the password (%q):\n%s", what, s, text)
				return
			}
		}
	}
	runs := []struct {
		env  map[string]string
		args []string
		ok   bool
	}{
		{good, []string{"apply", "--ladder", "pw", "--levels", "6", "--radix", "2", "--target", "work"}, true},
		{good, []string{"apply", "--ladder", "pw", "--levels", "6", "--radix", "2", "--json"}, true},
		{good, []string{"plan", "--ladder", "pw"}, true},
		{good, []string{"trace", "5s", "--ladder", "pw"}, true},
		{good, []string{"publish", "--ladder", "pw", "--delay", "40s", "--count", "2"}, true},
		{good, []string{"publish", "--ladder", "pw", "--delay", "40s", "--json"}, true},
		{good, []string{"status", "--ladder", "pw"}, true},
		{good, []string{"status", "--json"}, true},
		{good, []string{"discover", "--all-vhosts"}, true},
		{good, []string{"purge", "pw.rung.05", "--yes"}, true},
		{good, []string{"--help"}, true},
		{good, []string{"publish", "--help"}, true},
		{map[string]string{}, []string{"status", "--url", amqpURL, "--mgmt-url", mgmtURL, "--vhost", cfg.Vhost}, true},
		// Errors.
		{good, []string{"status", "--ladder", "ghost"}, false},
		{good, []string{"apply", "--ladder", "pw", "--unit", "2s", "--levels", "6", "--radix", "2"}, false},
		{good, []string{"status", "--vhost", "/"}, false}, // no permission there
		{good, []string{"apply", "--vhost", noSuchVhost}, false},
		{good, []string{"purge", "--ladder", "pw"}, false},
		{good, []string{"status", "--read-only", "--timeout", "1s", "--url", strings.Replace(amqpURL, hostPort(t, cfg.URL), "127.0.0.1:1", 1), "--mgmt-url", "http://127.0.0.1:1"}, false},
		{good, []string{"publish", "--ladder", "pw", "--delay", "1s", "--timeout", "1s", "--url", strings.Replace(amqpURL, hostPort(t, cfg.URL), "127.0.0.1:1", 1)}, false},
		{good, []string{"apply", "--url", withPW(cfg.URL, wrong)}, false},
		{good, []string{"status", "--mgmt-url", withPW(cfg.MgmtURL, wrong)}, false},
		{good, []string{"status", "--url", "amqp://" + user + ":" + pw + "@" + hostPort(t, cfg.URL) + "/"}, false}, // not escaped: unparseable
		{good, []string{"status", "--mgmt-url", "ftp://" + user + ":" + wrong + "@host"}, false},
		{good, []string{"apply", "--url", strings.Replace(amqpURL, "amqp://", "amqps://", 1), "--timeout", "2s"}, false}, // TLS to a plain port
		{good, []string{"teardown", "--ladder", "pw", "--read-only", "--yes"}, false},
		{good, []string{"teardown", "--ladder", "pw", "--yes"}, true},
	}
	for _, r := range runs {
		res := cliRun(r.env, "", false, r.args...)
		if (res.code == 0) != r.ok {
			t.Errorf("rungs %v: exit %d\n%s%s", r.args, res.code, res.out, res.errOut)
		}
		check(fmt.Sprintf("rungs %v (exit %d)", r.args, res.code), res.out+res.errOut)
	}

	// The console: the header names the user, never the password, also
	// when the password stops working under it.
	mustRungs(t, []string{"RUNGS_URL=" + amqpURL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}, "apply", "--ladder", "pw", "--levels", "6", "--radix", "2")
	termEnv := []string{"RUNGS_URL=" + amqpURL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	// Wide enough for the whole AMQP error in the header.
	m := newTerm(t, 400, 40, termEnv, rungsBinary(t)+" --ladder pw --refresh 1s; echo rungs-exit=$?; sleep 600")
	s := m.waitFor("the ladder", text("ladders › pw"), 30*time.Second)
	if !strings.Contains(s, user+"@") {
		t.Errorf("the header does not name the user:\n%s", s)
	}
	check("the console", s)
	mgmtCall(t, cfg, http.MethodPut, "/api/users/"+user, fmt.Sprintf(`{"password":%q,"tags":"management"}`, wrong))
	// The management API lists a connection one statistics interval late.
	testutil.Poll{Within: 20 * time.Second, Every: time.Second}.Eventually(t, "the console's connection to close", func() error {
		n, err := env.Mgmt.CloseConnections(context.Background(), cfg.Vhost)
		if err != nil {
			t.Fatalf("close the console's connection: %v", err)
		}
		if n == 0 {
			return errors.New("the management API lists no connection in the vhost")
		}
		return nil
	})
	s = m.waitFor("the refused reconnect", text("username or password not allowed"), 30*time.Second)
	check("the console after the password changed", s)
	s = m.waitFor("the refused refresh", text("401"), 30*time.Second)
	check("the console after the password changed", s)
	m.keys("q")
	s = m.waitFor("the exit", text("rungs-exit="), 10*time.Second)
	check("the console's exit", s)

	// A console that cannot start says why on stderr, without the password.
	m = newTerm(t, 200, 20, []string{"RUNGS_URL=" + withPW(cfg.URL, wrong+"x"), "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost},
		rungsBinary(t)+" --ladder pw; echo rungs-exit=$?; sleep 600")
	s = m.waitFor("the start-up error", text("rungs-exit=1"), 20*time.Second)
	if !strings.Contains(s, "username or password not allowed") {
		t.Errorf("the console's start-up error is not clear:\n%s", s)
	}
	check("the console's start-up error", s)
}
