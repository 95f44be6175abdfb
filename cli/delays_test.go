package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// delayCase is one library's delay design, declared and published exactly
// as the library's source does (see the App constants in
// topology/delays.go for the files and docs/delays.md for the commits).
type delayCase struct {
	group string // the inventory group it must be found as
	// basis is what migrate's estimate rests on (x-rungs-migrated).
	basis topology.Basis
	// delays are the delays published (default 10s and 45s).
	delays []time.Duration
	dest   string // the queue its delays end in
	// declare declares the library's objects for dest; publish sends one
	// message delayed by d, as the library does.
	declare func(t *testing.T, ch *amqp.Channel)
	publish func(t *testing.T, ch *amqp.Channel, id string, d time.Duration)
	// php publishes through the library's own code instead of publish,
	// when it is installed (Debian's packages); "" when there is none.
	php func(t *testing.T, cfg broker.Config, prefix string, d time.Duration, n int)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func rawPublish(t *testing.T, ch *amqp.Channel, ex, key string, p amqp.Publishing) {
	t.Helper()
	p.DeliveryMode = amqp.Persistent
	c, err := ch.PublishWithDeferredConfirm(ex, key, false, false, p)
	must(t, err)
	if ok, err := c.WaitContext(t.Context()); err != nil || !ok {
		t.Fatalf("publish to %q key %q not confirmed: %v", ex, key, err)
	}
}

// symfonyCase: symfony/amqp-messenger Transport/Connection.php (setupDelay,
// createDelayQueue, getRoutingKeyForDelay) with exchange "messages"
// (fanout, the transport's default type) bound to queue "messages" and no
// routing key: the delay queue delay_messages__%delay%_delay, durable,
// x-message-ttl = delay, x-expires = delay + 10000, dead-lettering to
// "messages" with key "", bound to the direct exchange "delays" by its own
// name, which is also the publish key.
var symfonyCase = delayCase{
	group: "symfony-messenger/messages", dest: "messages", basis: topology.BasisNone,
	declare: func(t *testing.T, ch *amqp.Channel) {
		must(t, ch.ExchangeDeclare("messages", "fanout", true, false, false, false, nil))
		_, err := ch.QueueDeclare("messages", true, false, false, false, nil)
		must(t, err)
		must(t, ch.QueueBind("messages", "", "messages", false, nil))
		must(t, ch.ExchangeDeclare("delays", "direct", true, false, false, false, nil))
	},
	publish: func(t *testing.T, ch *amqp.Channel, id string, d time.Duration) {
		ms := d.Milliseconds()
		name := fmt.Sprintf("delay_messages__%d_delay", ms)
		_, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-message-ttl": ms, "x-expires": ms + 10000,
			"x-dead-letter-exchange": "messages", "x-dead-letter-routing-key": "",
		})
		must(t, err)
		must(t, ch.QueueBind(name, name, "delays", false, nil))
		rawPublish(t, ch, "delays", name, amqp.Publishing{MessageId: id, Body: []byte(id)})
	},
	php: symfonyPHP,
}

// symfonyPHP publishes through Debian's php-symfony-amqp-messenger (the
// transport's own Connection::publish with a delay), when PHP, php-amqp and
// the package are installed.
func symfonyPHP(t *testing.T, cfg broker.Config, prefix string, d time.Duration, n int) {
	const autoload = "/usr/share/php/Symfony/Component/Messenger/Bridge/Amqp/autoload.php"
	if _, err := os.Stat(autoload); err != nil {
		// scripts/test.sh installs them: the suite never skips it there.
		msg := fmt.Sprintf("Symfony's AMQP transport is not installed (apt-get install php-cli php-amqp php-symfony-amqp-messenger): %v", err)
		if os.Getenv("RUNGS_REQUIRE_BROKER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	script := `<?php
require '` + autoload + `';
$c = Symfony\Component\Messenger\Bridge\Amqp\Transport\Connection::fromDsn($argv[1]);
for ($i = 0; $i < (int)$argv[3]; $i++) {
    $c->publish($argv[2] . $i, ['message_id' => $argv[2] . $i], (int)$argv[4], new Symfony\Component\Messenger\Bridge\Amqp\Transport\AmqpStamp(null, AMQP_NOPARAM, ['message_id' => $argv[2] . $i]));
}
`
	f := t.TempDir() + "/publish.php"
	must(t, os.WriteFile(f, []byte(script), 0o600))
	u := strings.TrimSuffix(cfg.URL, "/") + "/" + urlPathEscape(cfg.Vhost) + "/messages"
	out, err := exec.Command("php", f, u, prefix, fmt.Sprint(n), fmt.Sprint(d.Milliseconds())).CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s", err, out)
	}
}

func urlPathEscape(s string) string { return strings.ReplaceAll(s, "/", "%2F") }

// laravelCase: vyuldashev/laravel-queue-rabbitmq src/Queue/RabbitMQQueue.php
// (laterRaw, getDelayQueueArguments): queue {queue}.delay.{ms}, durable,
// x-dead-letter-exchange = the exchange ("" by default), routing key the
// queue, x-message-ttl = ms, x-expires = 2 ms; published straight into the
// delay queue through the default exchange.
var laravelCase = delayCase{
	group: "laravel-queue-rabbitmq/default", dest: "default", basis: topology.BasisNone,
	declare: func(t *testing.T, ch *amqp.Channel) {
		_, err := ch.QueueDeclare("default", true, false, false, false, nil)
		must(t, err)
	},
	publish: func(t *testing.T, ch *amqp.Channel, id string, d time.Duration) {
		ms := d.Milliseconds()
		name := fmt.Sprintf("default.delay.%d", ms)
		_, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default",
			"x-message-ttl": ms, "x-expires": ms * 2,
		})
		must(t, err)
		rawPublish(t, ch, "", name, amqp.Publishing{MessageId: id, Body: []byte(id)})
	},
}

// machineryCase: RichardKnop/machinery v1/brokers/amqp/amqp.go (delay):
// exchange machinery_exchange (direct), queue
// delay.{ms}.machinery_exchange.machinery_tasks, durable, dead-lettering to
// the exchange with key machinery_tasks, x-message-ttl = ms, x-expires =
// 2 ms, bound by its own name and published to with it.
var machineryCase = delayCase{
	group: "machinery/machinery_exchange", dest: "machinery_tasks", basis: topology.BasisNone,
	declare: func(t *testing.T, ch *amqp.Channel) {
		must(t, ch.ExchangeDeclare("machinery_exchange", "direct", true, false, false, false, nil))
		_, err := ch.QueueDeclare("machinery_tasks", true, false, false, false, nil)
		must(t, err)
		must(t, ch.QueueBind("machinery_tasks", "machinery_tasks", "machinery_exchange", false, nil))
	},
	publish: func(t *testing.T, ch *amqp.Channel, id string, d time.Duration) {
		ms := d.Milliseconds()
		name := fmt.Sprintf("delay.%d.machinery_exchange.machinery_tasks", ms)
		_, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-dead-letter-exchange": "machinery_exchange", "x-dead-letter-routing-key": "machinery_tasks",
			"x-message-ttl": ms, "x-expires": ms * 2,
		})
		must(t, err)
		must(t, ch.QueueBind(name, name, "machinery_exchange", false, nil))
		rawPublish(t, ch, "machinery_exchange", name, amqp.Publishing{MessageId: id, ContentType: "application/json", Body: []byte(id)})
	},
}

// goqueueCase: bxcodec/goqueue internal/consumer/rabbitmq/consumer.go
// (initRetryModule, requeueMessageWithDLQ): the topic exchange
// orders__retry_exchange, the fanout orders__retry_dlx bound to orders,
// retry queues orders__retry.{n} (n = 1..3) with only
// x-dead-letter-exchange, bound by their names; a retry is published to
// the retry exchange with its tier's name, an expiration of the delay and
// the time as timestamp. Tier n here waits n*delay/3 ... the test's delay
// goes to tier 1.
var goqueueCase = delayCase{
	group: "goqueue/orders", dest: "orders", basis: topology.BasisExpiration,
	declare: func(t *testing.T, ch *amqp.Channel) {
		_, err := ch.QueueDeclare("orders", true, false, false, false, nil)
		must(t, err)
		must(t, ch.ExchangeDeclare("orders__retry_exchange", "topic", true, false, false, false, nil))
		must(t, ch.ExchangeDeclare("orders__retry_dlx", "fanout", true, false, false, false, nil))
		must(t, ch.QueueBind("orders", "", "orders__retry_dlx", false, nil))
		for i := 1; i <= 3; i++ {
			name := fmt.Sprintf("orders__retry.%d", i)
			_, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "orders__retry_dlx"})
			must(t, err)
			must(t, ch.QueueBind(name, name, "orders__retry_exchange", false, nil))
		}
	},
	publish: func(t *testing.T, ch *amqp.Channel, id string, d time.Duration) {
		tier := 1
		if d > 8*time.Second {
			tier = 2
		}
		rawPublish(t, ch, "orders__retry_exchange", fmt.Sprintf("orders__retry.%d", tier), amqp.Publishing{
			MessageId: id, Body: []byte(id), Timestamp: time.Now(), AppId: "goqueue",
			Headers:    amqp.Table{"x-goqueue-retry-count": int64(tier)},
			Expiration: fmt.Sprint(d.Milliseconds()),
		})
	},
}

// sneakersCase: jondot/sneakers lib/sneakers/handlers/maxretry.rb: topic
// exchanges jobs-retry, jobs-error and jobs-retry-requeue; queue
// jobs-retry with x-dead-letter-exchange jobs-retry-requeue and
// x-message-ttl (retry_timeout) bound to jobs-retry with "#"; the worker
// queue jobs dead-letters to jobs-retry and is bound to jobs-retry-requeue
// with "#". A retry is the worker rejecting the message (no requeue), so
// the message reaches jobs-retry with x-death.
var sneakersCase = delayCase{
	group: "sneakers-maxretry/jobs", dest: "jobs", basis: topology.BasisDeath, delays: []time.Duration{45 * time.Second},
	declare: func(t *testing.T, ch *amqp.Channel) {
		for _, x := range []string{"jobs-retry", "jobs-error", "jobs-retry-requeue"} {
			must(t, ch.ExchangeDeclare(x, "topic", true, false, false, false, nil))
		}
		_, err := ch.QueueDeclare("jobs", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "jobs-retry"})
		must(t, err)
		must(t, ch.QueueBind("jobs", "#", "jobs-retry-requeue", false, nil))
		_, err = ch.QueueDeclare("jobs-error", true, false, false, false, nil)
		must(t, err)
		must(t, ch.QueueBind("jobs-error", "#", "jobs-error", false, nil))
	},
	publish: func(t *testing.T, ch *amqp.Channel, id string, d time.Duration) {
		// Sneakers has one retry queue: its TTL is the delay.
		_, err := ch.QueueDeclare("jobs-retry", true, false, false, false, amqp.Table{
			"x-dead-letter-exchange": "jobs-retry-requeue", "x-message-ttl": d.Milliseconds(),
		})
		must(t, err)
		must(t, ch.QueueBind("jobs-retry", "#", "jobs-retry", false, nil))
		rawPublish(t, ch, "", "jobs", amqp.Publishing{MessageId: id, Body: []byte(id)})
		// The worker fails it: a reject without requeue dead-letters it.
		m, ok, err := ch.Get("jobs", false)
		must(t, err)
		if !ok || m.MessageId != id {
			t.Fatalf("the worker got %q (%v), not %s", m.MessageId, ok, id)
		}
		must(t, m.Reject(false))
	},
}

type discoverDelaysJSON struct {
	Delays []struct {
		Vhost  string
		Groups []struct {
			ID       string
			Messages int64
			Queues   []struct{ Name string }
		}
	}
}

// untilTrue polls f every 200ms until it holds or within has passed.
func untilTrue(within time.Duration, f func() bool) bool {
	for end := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		if f() || time.Now().After(end) {
			return f()
		}
	}
}

// runDelayCase declares a library's design, publishes n messages with
// each of two delays, then checks that discover --delays counts them, that
// doctor names no problem, and that migrate --from-delays moves every one
// into a ladder from which each arrives once, none early.
func runDelayCase(t *testing.T, c delayCase, viaPHP bool) {
	env, cfg := brokerEnv(t)
	ch := brokertest.RawChannel(t, cfg)
	must(t, ch.Confirm(false))
	c.declare(t, ch)
	mustRun(t, env, "apply", "--ladder", "to", "--unit", "250ms", "--levels", "8", "--radix", "2", "--target", c.dest, "--queue-type", "classic") // up to 63.75s
	const n = 5
	// The longer delay outlasts the wait for the broker's statistics and
	// the doctor and dry runs before the migration on a loaded machine
	// (over 15s in one CI run, when every message had come due first).
	delays := []time.Duration{10 * time.Second, 45 * time.Second}
	if c.delays != nil {
		delays = c.delays
	}
	total := len(delays) * n
	var batches []published
	for _, d := range delays {
		b := published{prefix: fmt.Sprintf("d%d-", d.Milliseconds()), delay: d, at: time.Now()}
		if viaPHP {
			c.php(t, cfg, b.prefix, d, n)
		} else {
			for i := 0; i < n; i++ {
				c.publish(t, ch, fmt.Sprintf("%s%d", b.prefix, i), d)
			}
		}
		batches = append(batches, b)
	}
	// Watched from now on: a retry tier's worker (Sneakers') takes the
	// message from dest to fail it.
	conn := dial(t, cfg)
	a := watch(t, conn, c.dest)

	// The statistics of a new queue come with the broker's next emission.
	var disc discoverDelaysJSON
	var raw string
	counted := untilTrue(30*time.Second, func() bool {
		raw = mustRun(t, env, "discover", "--delays", "--json")
		disc = discoverDelaysJSON{}
		must(t, json.Unmarshal([]byte(raw), &disc))
		for _, g := range disc.Delays[0].Groups {
			if g.ID == c.group {
				return g.Messages == int64(total)
			}
		}
		return false
	})
	if !counted {
		t.Fatalf("discover --delays did not count %d messages in group %s:\n%s", total, c.group, raw)
	}
	for _, g := range disc.Delays[0].Groups {
		t.Logf("discovered %s: %d queue(s), %d message(s)", g.ID, len(g.Queues), g.Messages)
		if g.ID != c.group {
			t.Errorf("another group: %s", g.ID)
		}
	}
	code, out, _ := run(t, env, "doctor", "--target", "4.3")
	t.Logf("doctor --target 4.3 (exit %d), delays:\n%s", code, sectionOf(out, "delays"))

	dry := mustRun(t, env, "migrate", "--from-delays", c.group, "--to", "to", "--dry-run")
	if !strings.Contains(dry, "dry run: nothing was moved") || !strings.Contains(dry, "→ "+c.dest) {
		t.Errorf("dry run:\n%s", dry)
	}
	if code, _, errs := run(t, env, "migrate", "--from-delays", c.group, "--to", "to", "--yes", "--read-only"); code == ExitOK || !strings.Contains(errs, "read-only") {
		t.Errorf("migrate --read-only: exit %d %s", code, errs)
	}
	res := runMigrateJSON(t, env, "--from-delays", c.group, "--to", "to")
	t.Logf("migrated: moved %d, parked %d, stayed %d, unknown %d", res.Moved, res.Parked, res.Stayed, res.Unknown)
	// Under load a message may come due before migrate reaches it: it
	// then takes its library's own way, which is no loss.
	if res.Moved == 0 || res.Moved > total || res.Parked != 0 || res.Stayed != 0 {
		t.Errorf("migrate: %+v", res)
	}
	got := a.wait(t, c.dest, total, 90*time.Second)
	seen := map[string]bool{}
	migrated := 0
	for _, d := range got {
		if seen[d.MessageID] {
			t.Errorf("%s arrived twice", d.MessageID)
		}
		seen[d.MessageID] = true
		m, _ := d.Headers[topology.HeaderMigrated].(map[string]any)
		if m == nil {
			continue
		}
		migrated++
		if m["basis"] != string(c.basis) {
			t.Errorf("%s: x-rungs-migrated %v, want basis %s", d.MessageID, m, c.basis)
		}
	}
	t.Logf("FIGURES %s: published %d, moved %d, delivered %d (%d through the ladder), lost %d", c.group, total, res.Moved, len(seen), migrated, total-len(seen))
	if migrated != res.Moved {
		t.Errorf("%d came through the ladder, migrate moved %d", migrated, res.Moved)
	}
	// Lateness is reported, not judged: a message with no record of when
	// it entered its queue is taken to have just entered (late by up to its
	// TTL, never early).
	checkOnTime(t, got, 10*time.Minute, batches...)
}

// sectionOf is the lines of doctor's output under areas starting with
// prefix.
func sectionOf(out, prefix string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, " ") {
			in = strings.HasPrefix(l, prefix)
		}
		if in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestDelaysSymfony(t *testing.T) {
	t.Parallel()
	runDelayCase(t, symfonyCase, false)
}

func TestDelaysSymfonyRealCode(t *testing.T) {
	t.Parallel()
	runDelayCase(t, symfonyCase, true)
}

func TestDelaysLaravel(t *testing.T) {
	t.Parallel()
	runDelayCase(t, laravelCase, false)
}

func TestDelaysMachinery(t *testing.T) {
	t.Parallel()
	runDelayCase(t, machineryCase, false)
}

func TestDelaysGoqueue(t *testing.T) {
	t.Parallel()
	runDelayCase(t, goqueueCase, false)
}

func TestDelaysSneakers(t *testing.T) {
	t.Parallel()
	runDelayCase(t, sneakersCase, false)
}

// TestDelaysDoctorFindings: doctor names each risky delay on the release
// it runs on, and --target 4.3 what an upgrade breaks.
func TestDelaysDoctorFindings(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	ch := brokertest.RawChannel(t, cfg)
	m, err := broker.NewManagement(cfg)
	must(t, err)
	version, err := m.Version(t.Context())
	must(t, err)
	// A quorum delay queue with x-expires (symfony #57867's shape) that
	// dead-letters into a quorum work queue.
	_, err = ch.QueueDeclare("work", true, false, false, false, amqp.Table{"x-queue-type": "quorum"})
	must(t, err)
	_, err = ch.QueueDeclare("wait.5s", true, false, false, false, amqp.Table{
		"x-queue-type": "quorum", "x-message-ttl": int64(5000), "x-expires": int64(60000),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work",
	})
	must(t, err)
	// A transient delay queue, as Sneakers declares its retry queue
	// without queue_options durable. 4.3.6 still accepts it
	// (transient_nonexcl_queues is permitted by default there), unless the
	// operator denied the deprecated feature.
	transient := true
	if _, err := ch.QueueDeclare("transient.wait", false, false, false, false, amqp.Table{"x-message-ttl": int64(5000), "x-dead-letter-exchange": ""}); err != nil {
		t.Logf("RabbitMQ %s refuses a transient delay queue: %v", version, err)
		if !version.AtLeast(4, 0, 0) {
			t.Errorf("RabbitMQ %s refused a transient queue", version)
		}
		transient = false
	}

	code, out, _ := run(t, env, "doctor")
	delays := sectionOf(out, "delays")
	t.Logf("doctor (exit %d) on %s:\n%s", code, version, delays)
	if code != ExitError || !strings.Contains(delays, "✗ queue wait.5s") || !strings.Contains(delays, "x-expires") {
		t.Errorf("doctor does not name the quorum delay queue with x-expires as a problem:\n%s", delays)
	}
	if transient != strings.Contains(delays, "transient (non-durable) delay queue") {
		t.Errorf("transient queue declared %v, doctor:\n%s", transient, delays)
	}
	if limit := strings.Contains(delays, "queue work: quorum queue at the end of"); limit != version.AtLeast(4, 0, 0) {
		t.Errorf("delivery limit of work named %v on %s:\n%s", limit, version, delays)
	}
	_, out, _ = run(t, env, "doctor", "--target", "4.3")
	if !version.AtLeast(4, 0, 0) && !strings.Contains(out, "queue work: quorum queue at the end of") {
		t.Errorf("doctor --target 4.3 on %s does not name the delivery limit 4.x applies:\n%s", version, sectionOf(out, "delays"))
	}
}

// TestDelaysDoctorDefinitions: a delayed-message plugin exchange in
// definitions exported on 3.10 (the shape rabbitmqctl export_definitions
// writes) is what an upgrade to 4.3 breaks.
func TestDelaysDoctorDefinitions(t *testing.T) {
	t.Parallel()
	defs := `{"rabbitmq_version": "3.10.8", "vhosts": [{"name": "/"}],
	  "exchanges": [{"name": "delayed", "vhost": "/", "type": "x-delayed-message", "durable": true, "auto_delete": false, "internal": false, "arguments": {"x-delayed-type": "direct"}}],
	  "queues": [{"name": "work", "vhost": "/", "durable": true, "auto_delete": false, "arguments": {}}],
	  "bindings": [{"source": "delayed", "vhost": "/", "destination": "work", "destination_type": "queue", "routing_key": "work", "arguments": {}}]}`
	f := t.TempDir() + "/defs.json"
	must(t, os.WriteFile(f, []byte(defs), 0o600))
	env := map[string]string{}
	code, out, errs := run(t, env, "doctor", "--definitions", f)
	if code != ExitOK || strings.Contains(out, "Mnesia") {
		t.Errorf("on 3.10 without --target: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = run(t, env, "doctor", "--definitions", f, "--target", "4.3")
	if code != ExitError || !strings.Contains(out, "✗ exchange delayed: a delayed-message plugin exchange") || !strings.Contains(out, "[on 4.3") {
		t.Errorf("--target 4.3: exit %d\n%s", code, out)
	}
	// Its remedy is the bridge recipe, with the exchange's own type and
	// bindings, and the command it names parses.
	recipe := "rungs bridge --exchange delayed.bridged --type direct --copy-bindings-from delayed --yes"
	if !strings.Contains(strings.Join(strings.Fields(out), " "), recipe) || !strings.Contains(out, "docs/bridge.md") {
		t.Errorf("--target 4.3 does not name the bridge recipe %q:\n%s", recipe, out)
	}
	if err := Parse(strings.Fields(recipe)[1:]); err != nil {
		t.Errorf("the recipe does not parse: %v", err)
	}
	for name, args := range map[string][]string{
		"bad target":       {"doctor", "--target", "four"},
		"missing file":     {"doctor", "--definitions", t.TempDir() + "/none.json"},
		"not definitions":  {"doctor", "--definitions", f + "x"},
		"delays, no group": {"migrate", "--from-delays", "x/y", "--from", "a", "--to", "b"},
		"delays, no to":    {"migrate", "--from-delays", "x/y"},
		"delays and dest":  {"migrate", "--from-delays", "x/y", "--to", "b", "--dest", "q"},
		"neither from":     {"migrate", "--to", "b"},
	} {
		if code, out, errs := run(t, env, args...); code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") > 0 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
}

// TestMigrateDelaysSaysWhatOthersHold: a delay queue whose messages
// another consumer holds unacknowledged (a killed run's connection, until
// the broker notices it is gone) reads empty. migrate must say so and exit
// non-zero instead of reporting the queue drained, and move them once that
// consumer is gone.
func TestMigrateDelaysSaysWhatOthersHold(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	ch := brokertest.RawChannel(t, cfg)
	must(t, ch.Confirm(false))
	laravelCase.declare(t, ch)
	mustRun(t, env, "apply", "--ladder", "to", "--unit", "1s", "--levels", "12", "--radix", "2", "--target", "default", "--queue-type", "classic")
	const n = 5
	for i := 0; i < n; i++ {
		laravelCase.publish(t, ch, fmt.Sprintf("held-%d", i), 10*time.Minute)
	}
	const group = "laravel-queue-rabbitmq/default"
	if !untilTrue(30*time.Second, func() bool { return strings.Contains(mustRun(t, env, "discover", "--delays"), group) }) {
		t.Fatalf("discover --delays does not list %s", group)
	}
	holder := brokertest.RawChannel(t, cfg)
	must(t, holder.Qos(n, 0, false))
	ds, err := holder.Consume("default.delay.600000", "other", false, false, false, false, nil)
	must(t, err)
	for i := 0; i < n; i++ {
		select {
		case <-ds:
		case <-time.After(30 * time.Second):
			t.Fatalf("the other consumer got %d of %d", i, n)
		}
	}
	code, out, errs := run(t, env, "migrate", "--from-delays", group, "--to", "to", "--yes")
	if code == ExitOK || !strings.Contains(out, "warning: default.delay.600000 read empty with 1 other consumer attached") ||
		!strings.Contains(errs, "run migrate again once they are gone") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	must(t, holder.Close())
	res := runMigrateJSON(t, env, "--from-delays", group, "--to", "to")
	if res.Moved != n || res.Parked != 0 || res.Stayed != 0 {
		t.Errorf("once the other consumer closed: %+v", res)
	}
}
