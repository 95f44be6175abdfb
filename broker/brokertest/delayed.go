package brokertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// DelayedRetryHold is the hold DelayedRung configures: far longer than a
// test polls, so that a held message is still held when it is read.
const DelayedRetryHold = 10 * time.Minute

// DelayedRung declares, in cfg's vhost, a quorum ladder name (2 levels ×
// 1h, radix 2) whose lowest rung has delayed retry configured by its
// arguments (x-delayed-retry-type all, -min DelayedRetryHold; drift from
// the plan), publishes one message into that rung and hands it back with
// basic.nack requeue. RabbitMQ 4.3 then holds it as messages_delayed;
// older releases accept the arguments, ignore them and make it ready
// again. It returns the ladder and the rung's queue.
func DelayedRung(t testing.TB, cfg broker.Config, name string) (topology.Ladder, string) {
	t.Helper()
	l, err := topology.Ladder{Name: name, Vhost: cfg.Vhost, Unit: time.Hour, Levels: 2, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	rungs := l.Rungs()
	rung := rungs[len(rungs)-1].Queue
	plan := l.Plan()
	for i, q := range plan.Queues {
		if q.Name == rung {
			args := topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": DelayedRetryHold.Milliseconds()}
			for k, v := range q.Args {
				args[k] = v
			}
			plan.Queues[i].Args = args
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if res, err := conn.Publish(ctx, []broker.Message{{RoutingKey: rung, Body: []byte("held"), Persistent: true}}); err != nil || res.Confirmed != 1 {
		t.Fatalf("publish into %s: %+v %v", rung, res, err)
	}
	Nack(t, cfg, rung)
	return l, rung
}

// Nack takes one message off queue with basic.get and hands it back with
// basic.nack requeue: the hand-back that RabbitMQ 4.3's delayed retry
// holds (type all or returned).
func Nack(t testing.TB, cfg broker.Config, queue string) {
	t.Helper()
	HandBack(t, cfg, queue, "nack")
}

// Reject is Nack with basic.reject requeue: a failed delivery, which
// RabbitMQ 4.3's delayed retry holds under type all or failed, and which
// counts toward a quorum queue's delivery limit on every release.
func Reject(t testing.TB, cfg broker.Config, queue string) {
	t.Helper()
	HandBack(t, cfg, queue, "reject")
}

// PublishTo publishes n persistent messages to queue through the default
// exchange, with confirms.
func PublishTo(t testing.TB, cfg broker.Config, queue string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msgs := make([]broker.Message, n)
	for i := range msgs {
		msgs[i] = broker.Message{RoutingKey: queue, Body: []byte(fmt.Sprintf("m%d", i)), Persistent: true}
	}
	if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != n {
		t.Fatalf("publish %d into %s: %+v %v", n, queue, res, err)
	}
}

// HandBack takes one message off queue with basic.get and hands it back
// with requeue, by basic.nack (how "nack") or basic.reject ("reject").
func HandBack(t testing.TB, cfg broker.Config, queue, how string) {
	t.Helper()
	c, err := amqp.DialConfig(cfg.URL, amqp.Config{Vhost: cfg.Vhost})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "a message in "+queue+" to hand back", func() error {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return fmt.Errorf("%s is empty", queue)
		}
		var back error
		if how == "reject" {
			back = d.Reject(true)
		} else {
			back = d.Nack(false, true)
		}
		if back != nil {
			t.Fatal(back)
		}
		return nil
	})
	// Closing the channel waits for the broker's answer, so the nack has
	// arrived before the caller reads statistics.
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
}

// AwaitStats polls the management API for queue's statistics until ok
// accepts them or a generous statistics window (three 5 s emissions)
// passes; it returns the last statistics read.
func AwaitStats(t testing.TB, cfg broker.Config, queue string, ok func(topology.QueueStats) bool) topology.QueueStats {
	t.Helper()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last topology.QueueStats
	_ = testutil.Until(t, 16*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		qs, err := m.Stats(ctx, cfg.Vhost)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Name == queue {
				last = q.Stats
			}
		}
		if !ok(last) {
			return fmt.Errorf("%s: %+v", queue, last)
		}
		return nil
	})
	return last
}

// PutPolicy declares a policy in cfg's vhost as cfg's user (body is the
// management API's JSON) and returns the answer's status code: the
// caller asserts it, since releases differ in the keys they accept.
func PutPolicy(t testing.TB, cfg broker.Config, name, body string) int {
	t.Helper()
	status, _ := MgmtRequest(t, cfg, http.MethodPut, "/api/policies/"+url.PathEscape(cfg.Vhost)+"/"+url.PathEscape(name), body)
	return status
}

// MgmtRequest sends one request to the management API as cfg's user, for
// what rungs' own client does not do, and returns the answer's status and
// body.
func MgmtRequest(t testing.TB, cfg broker.Config, method, path, body string) (int, []byte) {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	req, err := http.NewRequest(method, strings.TrimSuffix(cfg.MgmtURL, "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(u.User.Username(), pw)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, answer
}

// RawChannel is a plain amqp091 channel to the test vhost, on a
// connection kept open until the test ends: for what other applications
// and workers do that rungs does not (declare their own queues, reject a
// message into a dead-letter queue, send a malformed frame).
func RawChannel(t testing.TB, cfg broker.Config) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Vhost: cfg.Vhost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// DeclareOthers declares n queues named prefix00000… on a few channels
// without waiting for each answer, as a broker's other applications would
// have. They are exclusive to a connection kept open until the test ends:
// the cheapest queues every release (4.3 included) accepts, listed like
// any other and gone with the connection.
func DeclareOthers(t testing.TB, cfg broker.Config, prefix string, n int) {
	t.Helper()
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Vhost: cfg.Vhost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	const channels = 4
	errs := make(chan error, channels)
	for w := 0; w < channels; w++ {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := w; i < n; i += channels {
				if _, err := ch.QueueDeclare(fmt.Sprintf("%s%05d", prefix, i), false, false, true, true, nil); err != nil {
					errs <- err
					return
				}
			}
			// A declaration that waits for its answer flushes the ones
			// before it: a refused one has closed the channel by then.
			_, err := ch.QueueDeclare(fmt.Sprintf("%s%05d", prefix, w), false, false, true, false, nil)
			errs <- err
		}()
	}
	for w := 0; w < channels; w++ {
		if err := <-errs; err != nil {
			t.Fatalf("declare %d queues: %v", n, err)
		}
	}
}

// Management is a management client of cfg and the broker's release, for
// a test whose expectations differ by release.
func Management(t testing.TB, cfg broker.Config) (*broker.Management, topology.Version) {
	t.Helper()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(10*time.Second, cfg.Timeout))
	defer cancel()
	v, err := m.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}
