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
// Commands that only the CLI has keep their decisions here too, where a
// test reaches them without cobra and the console can show them:
//
//   - doctor: Doctor judges DoctorFacts (what doctor read, failed reads
//     included) into Findings; a new source of findings is a function
//     and one entry in doctorChecks (the broker) or ladderChecks (each
//     ladder);
//   - apply: PlanApply (another shape under the name, layout safety,
//     conflicting objects) and CheckLayout, by topology.Ladder.RiskOn;
//   - the ladder defaults: LadderSpec.Ladder fills what the operator did
//     not give from the ladder found, LadderSpec.NewLadder picks a new
//     ladder's layout for the release;
//   - unstall: CheckUnstall, NamedStalledRungs or StalledRungs for the
//     targets, ChooseRemedy by topology.Version.StallRemedy, and
//     UnstallHint, the remedy doctor names;
//   - migrate: PlanMigrate, MigratePlan.GatePreview (GatePeek for a dry
//     run) and MigratePlan.Run.
//
// An InputError is a refusal for what the operator asked: the CLI exits 2.
//
// ops decides and builds; it does not print or draw. Pure rules it needs
// live in topology (route checks, header syntax, a message's story) and
// health (ladder health); ops adds what needs broker types.
//
// Import direction: ops imports topology and broker, and is imported by
// cli and model. ui never imports ops.
package ops
