package broker

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// delayQueueColumns are the queue fields an inventory of delays reads of
// every queue of a vhost: what says a queue delays (its arguments and
// consumers) and its depth. A delay queue is recognised by its arguments,
// which the management API cannot filter on, so the listing is of every
// queue, paged, in these columns only (about 200 bytes a queue). The
// policies in force and the delivery limit are there too, so that the
// same listing finds the quorum queues under delayed retry with their
// figures (ops.ReadRetryListed) and no second walk of the vhost is made:
// a queue without a policy costs "policy":null,"operator_policy":null,
// "effective_policy_definition":{}, about 70 bytes.
const delayQueueColumns = "name,durable,auto_delete,arguments,type,consumers,messages_ready,messages_unacknowledged,messages_dlx,messages_delayed,head_message_timestamp," +
	"policy,operator_policy,effective_policy_definition,delivery_limit"

// delayExchangeColumns adds messages_delayed, which the delayed-message
// plugin reports for its exchanges on the releases that have it.
const delayExchangeColumns = exchangeColumns + ",messages_delayed"

type apiDelayExchange struct {
	apiExchange
	Delayed *int64 `json:"messages_delayed"`
}

// DelaySnapshot reads what an inventory of one vhost's delays needs
// (topology.TakeInventory): every queue, 500 a page in a few columns;
// every exchange likewise; and the bindings of the exchanges the delay
// queues dead-letter to, one request each, so that their destinations are
// known. delayed holds messages_delayed by plugin exchange where the broker
// reports it. It changes nothing.
func (m *Management) DelaySnapshot(ctx context.Context, vhost string) (snap topology.Snapshot, delayed map[string]int64, err error) {
	snap = topology.Snapshot{Vhost: vhost}
	qs, err := listPaged[apiQueue](ctx, m, "queues/"+url.PathEscape(vhost), delayQueueColumns)
	if err != nil {
		return snap, nil, fmt.Errorf("list the queues of vhost %q: %w", vhost, m.accessError(ctx, vhost, err))
	}
	xs, err := listPaged[apiDelayExchange](ctx, m, "exchanges/"+url.PathEscape(vhost), delayExchangeColumns)
	if err != nil {
		return snap, nil, fmt.Errorf("list the exchanges of vhost %q: %w", vhost, m.accessError(ctx, vhost, err))
	}
	snap.Queues = m.toQueues(qs)
	plain := make([]apiExchange, 0, len(xs))
	delayed = map[string]int64{}
	for _, x := range xs {
		plain = append(plain, x.apiExchange)
		if x.Delayed != nil {
			delayed[x.Name] = *x.Delayed
		}
	}
	snap.Exchanges = mapExchanges(plain)
	seen := map[string]bool{}
	var sources []string
	for _, q := range snap.Queues {
		if ex, ok := q.DeadLetterExchange(); ok && ex != "" && q.Stats.Consumers == 0 && !seen[ex] {
			seen[ex] = true
			sources = append(sources, ex)
		}
	}
	// A Celery ladder's delivery exchange and the worker exchanges it
	// binds: doctor checks that a due message reaches a queue (kombu
	// #2252), and the ladder's own snapshot does not hold the workers'
	// exchanges' bindings.
	for _, x := range snap.Exchanges {
		if strings.HasSuffix(x.Name, "_delayed_delivery") && !seen[x.Name] {
			seen[x.Name] = true
			sources = append(sources, x.Name)
		}
	}
	sort.Strings(sources)
	bs, err := m.bindingsBySource(ctx, vhost, sources)
	if err == nil {
		var next []string
		for _, b := range bs {
			if b.DestinationType == topology.ToExchange && !seen[b.Destination] {
				seen[b.Destination] = true
				next = append(next, b.Destination)
			}
		}
		var more []apiBinding
		more, err = m.bindingsBySource(ctx, vhost, next)
		bs = append(bs, more...)
	}
	if err != nil {
		return snap, nil, fmt.Errorf("read the bindings of vhost %q: %w", vhost, err)
	}
	snap.Bindings = mapBindings(bs)
	return snap, delayed, nil
}

// listPaged reads a whole listing at path, 500 a page, in columns.
func listPaged[T any](ctx context.Context, m *Management, path, columns string) ([]T, error) {
	return listPagedQuery[T](ctx, m, path, columns, nil)
}

// listPagedQuery is listPaged with more query parameters (disable_stats).
func listPagedQuery[T any](ctx context.Context, m *Management, path, columns string, extra url.Values) ([]T, error) {
	var out []T
	for page := 1; ; page++ {
		var p apiPage[T]
		q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(maxPageSize)}, "sort": {"name"}, "columns": {columns}}
		for k, v := range extra {
			q[k] = v
		}
		if err := m.get(ctx, path, q, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if page >= p.PageCount {
			return out, nil
		}
	}
}
