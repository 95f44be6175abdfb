// Package ops is rungs' application layer: every operation that two front
// ends run (the CLI, the console) has one typed path here, request →
// check → plan → run → result, so that a rule changes in one place and
// the front ends cannot drift apart. They only gather input, confirm and
// render what ops returns.
//
// Watching ladders:
//
//   - the Observer: one per scope (Scope, ScopeOf: a vhost, optionally
//     ladders by name and layout); Read.Do is its only broker call, a
//     snapshot or statistics, scoped to the ladders when the inspector
//     reads by ladder (broker.LadderInspector); Report hands out one
//     health.Report; WatchStalls samples a waiting rung for one-shot
//     commands. The console, the exporter, status, discover, doctor and
//     unstall all watch through it.
//
// What each operation reads, by name where it names its objects (read.go):
// ReadLadders, ReadLadder, ReadCheck, ReadQueues, ReadPurge, ReadPeek
// (PeekIn for a snapshot already read), ReadReplay, ReadStoryLadders;
// PeekFactsOf, the one read of a quorum queue's peek facts, and
// ReadPeekFacts over it; LookupQueues for queues outside a scope. Delays
// lists every queue of a vhost (paged, a few columns), so a front end
// asks for it once, never on every tick.
//
// The operations both front ends run:
//
//   - ladder lookup: FindLadder, and SameLadder, the one identity rule;
//   - purge: PlanPurge decides the queues and the count the confirmation
//     shows, PurgePlan.Run empties them with progress as values;
//   - peek: GatePeek, the one decision whether a peek may go ahead, and
//     PeekStories, each message's story read once for every view;
//   - trace: Trace and CheckRoute, a trace with its route check;
//   - replay: ReplayRequest.Check and Plan (limit, rate, park, queues,
//     route, Where's header matching), PlanReplay for the route alone;
//   - publish: PublishRequest (its one count rule), Route (trace, then
//     check), Delayed.Check for the message properties, Delayed.Messages
//     to build them;
//   - scheduled messages: ParseFilterLine and ParseNewDue (the console's
//     typed input), PlanScan and ScanPlan.Run (the rungs read without
//     removing anything; ScanResult counts by horizon, beside
//     ForecastHorizons of the rungs' depths), PlanAction and
//     ActionPlan.Run (cancel, discard, reschedule, fire), with
//     CheckRescheduleDelay, the one rule of a new delay;
//   - delays outside ladders: Delays, the inventory of a vhost's TTL
//     queues and retry tiers.
//
// Commands that only the CLI has keep their decisions here too, where a
// test reaches them without cobra and the console can show them:
//
//   - doctor: Doctor judges DoctorFacts (what doctor read, failed reads
//     included) into Findings; a new source of findings is a function
//     and one entry in doctorChecks (the broker) or ladderChecks (each
//     ladder); SampleKeys reads a sample of a ladder's routing keys;
//   - apply: PlanApply (another shape under the name, a change of
//     dead-letter strategy, layout safety, conflicting objects),
//     AtMostOnceWarning (the trade an at-most-once ladder makes) and
//     CheckLayout, by topology.Ladder.RiskOn;
//   - the ladder defaults: LadderSpec.Ladder fills what the operator did
//     not give from the ladder found, LadderSpec.NewLadder picks a new
//     ladder's layout for the release;
//   - unstall: CheckUnstall, NamedStalledRungs or StalledRungs for the
//     targets, ChooseRemedy by topology.Version.StallRemedy, and
//     UnstallHint, the remedy doctor names;
//   - migrate: PlanMigrate, MigratePlan.GatePreview (GatePeek for a dry
//     run) and MigratePlan.Run.
//
// An InputError is a refusal for what the operator asked: the CLI exits
// 2. A FieldError names the input field a refusal is about, for a form.
//
// ops decides and builds; it does not print or draw. Pure rules it needs
// live in topology (route checks, header syntax, a message's story) and
// health (ladder health); ops adds what needs broker types.
//
// Import direction (TestOpsDocImports keeps this list true): ops imports
// broker, health and topology, and is imported by bench, cli, exporter,
// internal/lab and model. ui never imports ops.
package ops
