package topology

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Applications an inventory names. The names and arguments each one
// declares were read from its own source (the commits are in
// docs/delays.md); a queue is never recognised by its name alone: its
// arguments must say it delays (x-dead-letter-exchange, and a queue TTL or a
// library that sets a per-message one).
const (
	// AppSymfony is Symfony Messenger's AMQP transport
	// (symfony/amqp-messenger Transport/Connection.php, createDelayQueue and
	// getRoutingKeyForDelay): queue delay_%exchange_name%_%routing_key%_%delay%
	// plus "_delay" or "_retry", x-message-ttl = delay, x-expires = delay +
	// 10000, bound to the direct exchange "delays".
	AppSymfony = "symfony-messenger"
	// AppLaravel is laravel-queue-rabbitmq (src/Queue/RabbitMQQueue.php,
	// laterRaw and getDelayQueueArguments): queue {queue}.delay.{ms},
	// x-message-ttl = ms, x-expires = 2 ms.
	AppLaravel = "laravel-queue-rabbitmq"
	// AppEnqueue is Enqueue's RabbitMqDlxDelayStrategy: enqueue.{queue}.{ms}.delayed
	// for a queue, enqueue.{topic}[.{key}].{ms}.x.delay for a topic (older
	// releases: {queue}.{ms}.delayed and {topic}.{ms}.x.delayed).
	AppEnqueue = "enqueue"
	// AppMachinery is RichardKnop/machinery (v1/brokers/amqp/amqp.go,
	// delay): queue delay.{ms}.{exchange}.{routing_key}, x-message-ttl = ms,
	// x-expires = 2 ms, dead-lettering to {exchange} with {routing_key}.
	AppMachinery = "machinery"
	// AppGoqueue is bxcodec/goqueue (internal/consumer/rabbitmq/consumer.go,
	// initRetryModule): retry tiers {queue}__retry.{n} dead-lettering to the
	// fanout {queue}__retry_dlx, with no queue TTL: each retry is published
	// with an expiration and a timestamp.
	AppGoqueue = "goqueue"
	// AppSneakers is Sneakers' Maxretry handler
	// (lib/sneakers/handlers/maxretry.rb): queue {q}-retry with
	// x-message-ttl (retry_timeout, 60000 by default) dead-lettering to the
	// exchange {q}-retry-requeue; {q}-error holds the failures.
	AppSneakers = "sneakers-maxretry"
	// AppSpring is Spring Cloud Stream's Rabbit binder
	// (RabbitExchangeQueueProvisioner.autoBindDLQ): {destination}.{group}.dlq
	// with dlqTtl and dlqDeadLetterExchange dead-letters back to the queue.
	AppSpring = "spring-cloud-stream"
	// AppTTL is any other queue that delays: the group is where it
	// dead-letters to.
	AppTTL = "ttl-queues"
)

// Apps are the application names, in the order an inventory lists groups.
func Apps() []string {
	return []string{AppSymfony, AppLaravel, AppEnqueue, AppMachinery, AppGoqueue, AppSneakers, AppSpring, AppTTL}
}

// DelayQueue is one queue that holds messages for a time and then
// dead-letters them on, found by its arguments.
type DelayQueue struct {
	Name string
	App  string
	// Group names the application's unit the queue belongs to (its work
	// queue, exchange or dead-letter exchange); see DelayGroup.
	Group string
	// TTL is the queue's x-message-ttl; 0 with PerMessage when the library
	// sets an expiration on each message instead.
	TTL        time.Duration
	PerMessage bool
	// DeadLetterExchange and DeadLetterKey are where expired messages go;
	// KeepsKey is true when no x-dead-letter-routing-key is set, so each
	// message keeps its own key.
	DeadLetterExchange string
	DeadLetterKey      string
	KeepsKey           bool
	// Expires is x-expires: the queue is deleted, messages and all, once it
	// has been unused that long (0: never).
	Expires time.Duration
	Type    QueueType
	Durable bool
	// DeliveryLimit is x-delivery-limit (0: none set by argument).
	DeliveryLimit int64
	Messages      int64
	// Oldest is how long the head message has waited, when the broker
	// knows it (a timestamp property on a classic queue); 0 otherwise.
	Oldest time.Duration
	// Consumers on a delay queue take its messages before their delay
	// (or a consumer that left is still counted); only a queue a library
	// names as its delay queue is listed with any.
	Consumers int64
	// Destinations are the queues its dead-lettering reaches, as bound now
	// (empty when the route depends on each message's key, or leads
	// nowhere).
	Destinations []string
}

// DeadLetterTo says where the queue's messages go, in one phrase.
func (d DelayQueue) DeadLetterTo() string {
	x := d.DeadLetterExchange
	if x == "" {
		x = "(default exchange)"
	}
	switch {
	case d.KeepsKey:
		return x + " with each message's key"
	case d.DeadLetterKey == "":
		return x
	}
	return x + " key " + d.DeadLetterKey
}

// DelayGroup is the delay queues of one application unit.
type DelayGroup struct {
	App      string
	Name     string
	Queues   []DelayQueue
	Messages int64
	// Oldest is the longest any head message has waited, where known.
	Oldest time.Duration
	// DeadLetterTo lists where the group's queues dead-letter to, sorted,
	// without duplicates.
	DeadLetterTo []string
}

// ID is how a command names the group: app/name.
func (g DelayGroup) ID() string { return g.App + "/" + g.Name }

// PluginExchange is an exchange of the delayed-message plugin
// (type x-delayed-message): its messages wait inside the exchange, in
// Mnesia, invisible to queue listings.
type PluginExchange struct {
	Name string
	// DelayedType is x-delayed-type, the routing it does once a message is
	// due.
	DelayedType string
	Durable     bool
	// Delayed is messages_delayed where the broker reports it (Reported).
	Delayed  int64
	Reported bool
}

// PluginExchangeType is the delayed-message plugin's exchange type.
const PluginExchangeType = "x-delayed-message"

// Inventory is every delay of one vhost that is not a ladder rungs knows.
type Inventory struct {
	Vhost   string
	Groups  []DelayGroup
	Plugins []PluginExchange
	// Retry are the quorum queues under RabbitMQ 4.3's delayed retry, of
	// every kind (a ladder's rungs too): the broker's own delay, on
	// hand-back rather than on publish. RetryRead says they were read
	// (from 4.3 only); Empty does not count them.
	Retry     []RetryQueue
	RetryRead bool
}

// WithRetry is the inventory with the vhost's queues under delayed retry.
func (inv Inventory) WithRetry(qs []RetryQueue) Inventory {
	inv.Retry, inv.RetryRead = append([]RetryQueue(nil), qs...), true
	SortRetry(inv.Retry)
	return inv
}

// Queues counts the delay queues of every group.
func (inv Inventory) Queues() int {
	n := 0
	for _, g := range inv.Groups {
		n += len(g.Queues)
	}
	return n
}

// Empty reports whether the vhost holds no delay outside ladders.
func (inv Inventory) Empty() bool { return len(inv.Groups) == 0 && len(inv.Plugins) == 0 }

// Group finds a group by its ID or, when unambiguous, by name.
func (inv Inventory) Group(id string) (DelayGroup, bool) {
	var hit []DelayGroup
	for _, g := range inv.Groups {
		if g.ID() == id {
			return g, true
		}
		if g.Name == id {
			hit = append(hit, g)
		}
	}
	if len(hit) == 1 {
		return hit[0], true
	}
	return DelayGroup{}, false
}

// Library name patterns. Each also checks an argument where the library
// fixes one, so that a queue merely named alike is a plain TTL queue.
var (
	symfonyName   = regexp.MustCompile(`^delay_(.*)_(\d+)_(delay|retry)$`)
	laravelName   = regexp.MustCompile(`^(.+)\.delay\.(\d+)$`)
	enqueueQueue  = regexp.MustCompile(`^(?:enqueue\.)?(.+)\.(\d+)\.delayed$`)
	enqueueTopic  = regexp.MustCompile(`^(?:enqueue\.)?(.+)\.(\d+)\.x\.delay(?:ed)?$`)
	machineryName = regexp.MustCompile(`^delay\.(\d+)\.(.+)$`)
	goqueueName   = regexp.MustCompile(`^(.+)__retry\.(\d+)$`)
	sneakersName  = regexp.MustCompile(`^(.+)-retry$`)
	springName    = regexp.MustCompile(`^(.+)\.dlq$`)
)

// TakeInventory finds every queue of s that delays messages and every
// delayed-message plugin exchange, leaving out the queues of the ladders
// found (rungs', NServiceBus', Celery's: Discover lists those). A queue
// delays when it dead-letters (x-dead-letter-exchange), has no consumers,
// and either has a queue TTL or belongs to a library that sets a TTL on
// each message (goqueue's tiers). Groups are sorted by app (Apps order),
// then name; queues within a group by TTL, then name.
func TakeInventory(s Snapshot, ladders []Found) Inventory {
	inv := Inventory{Vhost: s.Vhost}
	owned := func(name string) bool {
		for _, f := range ladders {
			if _, _, ok := f.Ladder.QueueRole(name); ok {
				return true
			}
		}
		return false
	}
	g := NewGraph(s)
	groups := map[[2]string]*DelayGroup{}
	for _, q := range s.Queues {
		d, ok := delayQueue(q)
		if !ok || owned(q.Name) {
			continue
		}
		if !d.KeepsKey {
			d.Destinations, _, _ = g.Route(d.DeadLetterExchange, d.DeadLetterKey)
		}
		k := [2]string{d.App, d.Group}
		grp, ok := groups[k]
		if !ok {
			grp = &DelayGroup{App: d.App, Name: d.Group}
			groups[k] = grp
		}
		grp.Queues = append(grp.Queues, d)
		grp.Messages += d.Messages
		grp.Oldest = max(grp.Oldest, d.Oldest)
		if to := d.DeadLetterTo(); !containsString(grp.DeadLetterTo, to) {
			grp.DeadLetterTo = append(grp.DeadLetterTo, to)
		}
	}
	order := map[string]int{}
	for i, a := range Apps() {
		order[a] = i
	}
	for _, grp := range groups {
		sort.Strings(grp.DeadLetterTo)
		sort.Slice(grp.Queues, func(i, j int) bool {
			a, b := grp.Queues[i], grp.Queues[j]
			if a.TTL != b.TTL {
				return a.TTL < b.TTL
			}
			return a.Name < b.Name
		})
		inv.Groups = append(inv.Groups, *grp)
	}
	sort.Slice(inv.Groups, func(i, j int) bool {
		a, b := inv.Groups[i], inv.Groups[j]
		if a.App != b.App {
			return order[a.App] < order[b.App]
		}
		return a.Name < b.Name
	})
	for _, x := range s.Exchanges {
		if x.Type != PluginExchangeType {
			continue
		}
		p := PluginExchange{Name: x.Name, Durable: x.Durable}
		p.DelayedType, _ = x.Args["x-delayed-type"].(string)
		inv.Plugins = append(inv.Plugins, p)
	}
	sort.Slice(inv.Plugins, func(i, j int) bool { return inv.Plugins[i].Name < inv.Plugins[j].Name })
	return inv
}

// WithDelayed adds the messages_delayed counts a broker reported, by
// exchange name, to the plugin exchanges.
func (inv Inventory) WithDelayed(counts map[string]int64) Inventory {
	ps := append([]PluginExchange(nil), inv.Plugins...)
	for i := range ps {
		if n, ok := counts[ps[i].Name]; ok {
			ps[i].Delayed, ps[i].Reported = n, true
		}
	}
	inv.Plugins = ps
	return inv
}

// delayQueue reads a queue as a delay queue, or says it is not one.
func delayQueue(q Queue) (DelayQueue, bool) {
	dlx, ok := q.DeadLetterExchange()
	if !ok {
		return DelayQueue{}, false
	}
	d := DelayQueue{
		Name: q.Name, DeadLetterExchange: dlx, Type: q.QueueType(), Durable: q.Durable,
		Messages: q.Stats.Messages(), Oldest: q.Stats.HeadAge, Consumers: q.Stats.Consumers,
	}
	if k, ok := q.Args["x-dead-letter-routing-key"].(string); ok {
		d.DeadLetterKey = k
	} else {
		d.KeepsKey = true
	}
	if v, ok := NormalizeArg(q.Args["x-expires"]).(int64); ok && v > 0 {
		d.Expires = time.Duration(v) * time.Millisecond
	}
	if v, ok := NormalizeArg(q.Args["x-delivery-limit"]).(int64); ok {
		d.DeliveryLimit = v
	}
	ttl, hasTTL := q.TTL()
	d.TTL = ttl
	d.App, d.Group = recognise(q.Name, d, hasTTL)
	// Any queue with a TTL and a consumer is a work queue whose messages
	// may expire, not a delay; one a library named as its delay queue
	// stays in its group however the consumer count reads. The management
	// API counts a consumer for a statistics interval after it left, and
	// a migration must not lose the queue for it.
	if d.App == "" || d.App == AppTTL && d.Consumers > 0 {
		return DelayQueue{}, false
	}
	d.PerMessage = !hasTTL
	return d, true
}

// recognise names the application that made a delay queue, and its group;
// "" when the queue does not delay (no TTL, and no library that sets one
// per message).
func recognise(name string, d DelayQueue, hasTTL bool) (app, group string) {
	ms := d.TTL.Milliseconds()
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	if m := goqueueName.FindStringSubmatch(name); m != nil && d.DeadLetterExchange == m[1]+"__retry_dlx" {
		return AppGoqueue, m[1]
	}
	if !hasTTL {
		return "", ""
	}
	if m := symfonyName.FindStringSubmatch(name); m != nil && num(m[2]) == ms && d.Expires == d.TTL+10*time.Second {
		// The exchange and routing key are joined by "_" and may hold
		// one: the dead-letter exchange is the transport's exchange for
		// delays and the default exchange for retries.
		if d.DeadLetterExchange != "" {
			return AppSymfony, d.DeadLetterExchange
		}
		return AppSymfony, d.DeadLetterKey
	}
	if m := laravelName.FindStringSubmatch(name); m != nil && num(m[2]) == ms {
		return AppLaravel, m[1]
	}
	if m := machineryName.FindStringSubmatch(name); m != nil && num(m[1]) == ms && d.Expires == 2*d.TTL {
		return AppMachinery, d.DeadLetterExchange
	}
	for _, re := range []*regexp.Regexp{enqueueQueue, enqueueTopic} {
		if m := re.FindStringSubmatch(name); m != nil && num(m[2]) == ms {
			return AppEnqueue, m[1]
		}
	}
	if m := sneakersName.FindStringSubmatch(name); m != nil && d.DeadLetterExchange == m[1]+"-retry-requeue" {
		return AppSneakers, m[1]
	}
	if m := springName.FindStringSubmatch(name); m != nil {
		return AppSpring, m[1]
	}
	g := d.DeadLetterExchange
	if g == "" {
		g = "(default exchange)"
	}
	return AppTTL, g
}

func containsString(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// Describe is one line about the group: queues, delays, messages, oldest.
func (g DelayGroup) Describe() string {
	var ttls []string
	per := false
	for _, q := range g.Queues {
		if q.PerMessage {
			per = true
			continue
		}
		if t := FormatDelay(q.TTL); !containsString(ttls, t) {
			ttls = append(ttls, t)
		}
	}
	if per {
		ttls = append(ttls, "per-message TTL")
	}
	shown := ttls
	if len(shown) > 4 {
		shown = append(append([]string(nil), ttls[:3]...), fmt.Sprintf("+%d", len(ttls)-3))
	}
	s := fmt.Sprintf("%s, %s (%s), %s waiting", Counted(len(g.Queues), "queue", "queues"),
		Counted(len(ttls), "delay", "delays"), strings.Join(shown, " "), FormatCount(g.Messages))
	if g.Oldest > 0 {
		s += ", oldest " + FormatSpan(g.Oldest.Truncate(time.Second))
	}
	return s
}
