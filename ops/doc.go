// Package ops is rungs' application layer: every operation that two front
// ends run (the CLI, the console) has one typed path here, request →
// check → plan → run → result, so that a rule changes in one place and
// the front ends cannot drift apart. They only gather input, confirm and
// render what ops returns.
//
//   - ladder lookup: FindLadder, and SameLadder, the one identity rule;
//   - purge: PlanPurge decides the queues and the count the confirmation
//     shows, PurgePlan.Run empties them with progress as values;
//   - peek: GatePeek, the one decision whether a peek may go ahead, and
//     PeekStories, each message's story read once for every view;
//   - trace: Trace and CheckRoute, a trace with its route check;
//   - replay: ReplayRequest.Check and Plan (limit, rate, park, queues,
//     route, Where's header matching), PlanReplay for the route alone;
//   - publish: Delayed.Check for the message properties, Delayed.Messages
//     to build them.
//
// ops decides and builds; it does not print or draw. Pure rules it needs
// live in topology (route checks, header syntax, a message's story) and
// health (ladder health); ops adds what needs broker types.
//
// Import direction: ops imports topology and broker, and is imported by
// cli and model. ui never imports ops.
package ops
