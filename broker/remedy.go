package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A stalled quorum rung (see health.Stalled) has a dead-letter worker that
// stopped forwarding its expired messages. Measured on RabbitMQ 3.10.8 and
// 4.0.5 (a node restarted while a quorum ladder was in flight; the broker
// logged "Cannot forward any dead-letter messages ... exchange ... does not
// exist" once, though the exchange existed), with these remote attempts:
//
//   - re-declaring the dead-letter exchange (PUT /api/exchanges, same
//     arguments): nothing moved, on either version;
//   - a policy matching only the stalled queue (PUT /api/policies), and
//     likewise an operator policy: the queue's messages_dlx drained to the
//     next rung within one statistics interval, on both versions. Any
//     policy change makes the quorum queue apply a new configuration,
//     which sets its dead-letter worker going again.
//
// So the remote remedy is a policy that changes nothing but that it
// applies: ours matches exactly one queue, repeats the definition of the
// policy that applied to it before (if any) at a higher priority, and adds
// the queue's own dead-letter exchange, which its x-dead-letter-exchange
// argument already sets (for a quorum queue the argument wins over a
// policy anyway). It is deleted again once the rung drains.
//
// With node access, restarting the queue's Ra member (RaftRestartExpr)
// cures it too: the member's leader starts a new dead-letter worker.
//
// On 4.3.6 the policy does not (measured twice), while the Ra member
// restart does, and in a cluster so does any change of leader: removing
// the leading member through the management API (MoveLeader) drained every
// stalled rung it was tried on, removing a follower did not. See
// topology.Version.StallRemedy.
//
// Left alone, a stalled rung on our single test nodes moved on by itself
// after 2 to 4.5 minutes (3.10) and within 3.2 minutes (4.0), one run
// each; the issue measured 8 minutes and more. Either is far longer than a
// delay ladder may hold a due message, and nothing says when it happens.

// NudgePolicyPrefix starts the name of the policies NudgeDeadLettering
// declares, so that an operator can tell (and remove) a leftover one.
const NudgePolicyPrefix = "rungs-unstall."

// NudgeDeadLettering declares a policy that changes nothing for the queue
// but makes its dead-letter worker start again (see above). It returns the
// policy's name; undo deletes the policy and must be called when the rung
// has drained (or the caller gives up). The queue must be a quorum queue
// with a dead-letter exchange argument.
func (m *Management) NudgeDeadLettering(ctx context.Context, vhost string, q topology.Queue) (name string, undo func(context.Context) error, err error) {
	if m.ep.readOnly {
		return "", nil, ErrReadOnly
	}
	if q.QueueType() != topology.Quorum {
		return "", nil, fmt.Errorf("queue %s is %s, not quorum: only quorum queues dead-letter at least once", q.Name, q.QueueType())
	}
	dlx, ok := q.DeadLetterExchange()
	if !ok {
		return "", nil, fmt.Errorf("queue %s has no x-dead-letter-exchange argument", q.Name)
	}
	v := url.PathEscape(vhost)
	var policies []topology.Policy
	if err := m.get(ctx, "policies/"+v, nil, &policies); err != nil {
		return "", nil, fmt.Errorf("list policies of vhost %s: %w", vhost, err)
	}
	p := nudgePolicy(q, dlx, policies)
	body, err := json.Marshal(map[string]any{
		"pattern": p.Pattern, "apply-to": p.ApplyTo, "priority": p.Priority, "definition": p.Definition,
	})
	if err != nil {
		return "", nil, err
	}
	path := "policies/" + v + "/" + url.PathEscape(p.Name)
	if err := m.send(ctx, http.MethodPut, path, body); err != nil {
		return "", nil, fmt.Errorf("declare policy %s: %w", p.Name, err)
	}
	undo = func(ctx context.Context) error {
		err := m.send(ctx, http.MethodDelete, path, nil)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("delete policy %s: %w", p.Name, err)
		}
		return nil
	}
	return p.Name, undo, nil
}

// nudgePolicy is the policy NudgeDeadLettering declares for q: it matches
// q alone and, at a priority above every policy that matches q now, repeats
// the definition of the one that applies, so the queue's effective policy
// keeps its meaning.
func nudgePolicy(q topology.Queue, dlx string, policies []topology.Policy) topology.Policy {
	var match []topology.Policy
	for _, p := range policies {
		if !strings.HasPrefix(p.Name, NudgePolicyPrefix) && p.Applies(q) {
			match = append(match, p)
		}
	}
	sort.SliceStable(match, func(i, j int) bool {
		if match[i].Priority != match[j].Priority {
			return match[i].Priority > match[j].Priority
		}
		return match[i].Name < match[j].Name
	})
	def := map[string]any{}
	priority := 0
	if len(match) > 0 {
		for k, v := range match[0].Definition {
			def[k] = v
		}
		priority = match[0].Priority + 1
	}
	if _, set := def["dead-letter-exchange"]; !set {
		def["dead-letter-exchange"] = dlx
	}
	return topology.Policy{
		Name:    NudgePolicyPrefix + q.Name,
		Pattern: "^" + regexp.QuoteMeta(q.Name) + "$",
		// "queues" exists on 3.10 and 4.x alike (quorum_queues is 3.12+).
		ApplyTo:    "queues",
		Priority:   priority,
		Definition: def,
	}
}

// QuorumMembers is a quorum queue's leader and members as the management
// API reports them (node names).
func (m *Management) QuorumMembers(ctx context.Context, vhost, queue string) (leader string, members []string, err error) {
	var q struct {
		Leader  string   `json:"leader"`
		Members []string `json:"members"`
	}
	path := "queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(queue)
	if err := m.get(ctx, path, url.Values{"columns": {"leader,members"}}, &q); err != nil {
		return "", nil, fmt.Errorf("read the members of queue %s: %w", queue, err)
	}
	return q.Leader, q.Members, nil
}

// leaderMovePoll is how often MoveLeader re-reads the queue while it waits
// for another member to lead it, or for the broker to take the old one back.
const leaderMovePoll = 500 * time.Millisecond

// MoveLeader removes the member that leads a quorum queue, waits for
// another member to be elected, and adds the removed node back as a
// follower, all through the management API (see
// topology.RemedyLeaderMove). The new leader starts a dead-letter worker of
// its own. It needs a queue of two members or more and a broker with the
// membership API (topology.Version.QuorumMembershipAPI); ctx bounds the
// whole move. If the node cannot be added back, the error says how to.
func (m *Management) MoveLeader(ctx context.Context, vhost, queue string) (from, to string, err error) {
	if m.ep.readOnly {
		return "", "", ErrReadOnly
	}
	from, members, err := m.QuorumMembers(ctx, vhost, queue)
	if err != nil {
		return "", "", err
	}
	if from == "" || len(members) < 2 {
		return "", "", fmt.Errorf("queue %s has %d member(s) and leader %q: no other member can lead it", queue, len(members), from)
	}
	body, err := json.Marshal(map[string]string{"node": from})
	if err != nil {
		return "", "", err
	}
	base := "queues/quorum/" + url.PathEscape(vhost) + "/" + url.PathEscape(queue) + "/replicas/"
	// These routes answer 406 to "Accept: application/json" (4.0.5 and
	// 4.3.6): they offer no JSON.
	if err := m.sendAccepting(ctx, http.MethodDelete, base+"delete", body, ""); err != nil {
		return from, "", fmt.Errorf("remove the leader %s of queue %s: %w", from, queue, err)
	}
	readd := fmt.Sprintf("the member on %s was removed: add it back with rabbitmq-queues add_member --vhost %s %s %s", from, vhost, queue, from)
	for to == "" || to == from {
		if err := sleepCtx(ctx, leaderMovePoll); err != nil {
			return from, "", fmt.Errorf("queue %s elected no other leader (%w); %s", queue, err, readd)
		}
		if to, _, err = m.QuorumMembers(ctx, vhost, queue); err != nil {
			return from, "", fmt.Errorf("%w; %s", err, readd)
		}
	}
	// The removal is asynchronous (202): until it is done the broker
	// refuses the node as a member it already has.
	for {
		err = m.sendAccepting(ctx, http.MethodPost, base+"add", body, "")
		if err == nil {
			return from, to, nil
		}
		if serr := sleepCtx(ctx, leaderMovePoll); serr != nil {
			return from, to, fmt.Errorf("add %s back to queue %s: %w; %s", from, queue, err, readd)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RaftRestartExpr is the Erlang expression that `rabbitmqctl eval` runs to
// restart a quorum queue's Ra member on its leader's node, which starts a
// new dead-letter worker. On 3.10 and 4.0 alike the queue record's pid is
// a Ra server id {RaName, Node}, and ra:stop_server/2 and
// ra:restart_server/2 take the Ra system (quorum_queues) and that id.
//
// The record's node is where the leader was when the record was last
// written, which after a cluster restart need not be where it is now: a
// 3.10.8 cluster's cure restarted a follower that way and the rung stayed
// stalled. So the expression asks Ra (ra:members, answered through that
// member) who leads now, and restarts that one. The messages stay in the
// members' logs: nothing is lost.
func RaftRestartExpr(vhost, queue string) string {
	return fmt.Sprintf(`{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(%s, queue, %s)), `+
		`{ok, _, Id} = ra:members(amqqueue:get_pid(Q)), `+
		`ok = ra:stop_server(quorum_queues, Id), ok = ra:restart_server(quorum_queues, Id), Id.`,
		erlBinary(vhost), erlBinary(queue))
}

// erlBinary writes s as an Erlang UTF-8 binary literal.
func erlBinary(s string) string {
	var b strings.Builder
	b.WriteString(`<<"`)
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(`"/utf8>>`)
	return b.String()
}
