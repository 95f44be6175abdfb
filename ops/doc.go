// Package ops is rungs' application layer: every operation that two front
// ends run (the CLI, the console) has one typed path here, request →
// check → plan → run → result, so that a rule changes in one place and
// the front ends cannot drift apart. They only gather input, confirm and
// render what ops returns. An operation has one entry point that reads
// what it needs itself, soft-serve's backend style: Purge, Replay,
// Scheduled, PlanUnstall, PlanBridge, Migrate. Where the operator must confirm,
// the entry point returns a plan, the front end asks, and the plan's Run
// does it; the front end decides nothing in between.
//
// Watching ladders:
//
//   - the Observer: one per scope (Scope, ScopeOf: a vhost, optionally
//     ladders by name and layout); Read.Do is its only broker call, a
//     snapshot or statistics of the reach the read asks for (Reach:
//     ReachScoped, the ladders' objects by name, the default, or
//     ReachVhost, the whole vhost, asked for explicitly). A scoped read
//     needs a ScopedInspector (broker.LadderInspector's reads): every
//     one-shot read below takes one, checked when it compiles, and Read.Do
//     fails a scoped read of an inspector without them, naming what it
//     lacks, rather than reading the whole vhost; Report hands out one
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
//   - purge: Purge reads (ReadPurge), finds the ladder and plans
//     (PlanPurge: the queues, and the count the confirmation shows, its
//     Question and Word); PurgePlan.Run empties them with progress as
//     values; the console, which has its snapshot, plans with PlanPurge;
//   - peek: GatePeek, the one decision whether a peek may go ahead, and
//     PeekStories, each message's story read once for every view;
//   - trace: Trace and CheckRoute, a trace with its route check;
//   - replay: Replay, both front ends' entry point (checks the request,
//     reads by name with ReadReplay unless handed the console's scope,
//     resolves the ladder the CLI names, plans); ReplayInput, the CLI's
//     flags as a request (Request) and its refusals in their words
//     (Refused); ReplayRequest.Check and
//     Plan (limit, rate, park, queues, route, Where's header matching),
//     PlanReplay for the route alone; ReplayPlan's Question, Word, Run
//     (its outcome as the error) and Preview (ReplayVerdicts, whether each
//     message a dry run peeked at moves);
//   - publish: PublishRequest (its one count rule), Route (trace, then
//     check), Delayed.Check for the message properties, Delayed.Messages
//     to build them and Delayed.Send to publish them in batches at a
//     pace;
//   - scheduled messages: Scheduled, the CLI's one entry point (reads the
//     terms, FilterTerms and ActionTerms, then the ladder by name, gates
//     the scan and checks the action); ParseFilterLine and ParseNewDue
//     (the console's typed input), PlanScan and ScanPlan.Run (the rungs read without
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
//   - doctor: Doctor, the one entry point, reads through a DoctorReader
//     what a DoctorRequest asks (ReadDoctor) and Judge judges those
//     DoctorFacts (what doctor read, failed reads included) into
//     Findings; a new source of findings is a function and one entry in
//     doctorChecks (the broker) or ladderChecks (each ladder); SampleKeys
//     reads a sample of a ladder's routing keys;
//   - apply: PlanApply (another shape under the name, a change of
//     dead-letter strategy, layout safety, conflicting objects),
//     AtMostOnceWarning (the trade an at-most-once ladder makes) and
//     CheckLayout, by topology.Ladder.RiskOn;
//   - the ladder defaults: LadderSpec.Resolve finds the ladder and merges
//     the operator's shape with it (LadderSpec.Ladder fills what the
//     operator did not give from the ladder found), or makes a new one
//     whose layout LadderSpec.NewLadder picks for the release;
//   - unstall: PlanUnstall finds the ladder, refuses a lost route, picks
//     the targets (NamedStalledRungs, or StalledRungs of the watch the
//     front end runs) and the remedy (ChooseRemedy by
//     topology.Version.StallRemedy); UnstallHint, the remedy doctor names;
//   - bridge: BridgeAsk.Check refuses what can never work, PlanBridge
//     reads what the bridge would create and the bindings it copies;
//     ReadBridges, the bridges of a vhost for the console and exporter;
//   - migrate: Migrate reads both ladders by name, or every ladder and
//     the delay inventory for a migration of delays, and plans
//     (PlanMigrate, the one planner of both); MigratePlan.GatePreview
//     (GatePeek for a dry run) and MigratePlan.Run.
//
// The operator's input, read once for every front end:
//
//   - ConfigSource: the config file, the context chosen and the broker
//     resolved from flag, environment, context and default (the CLI and
//     the console's :ctx);
//   - LadderArgs: what the ladder flags name, whether they fix the shape,
//     and their refusals; ShownPlan, UnreadShapeError;
//   - Export (CheckExportFormat, ExportFormats): a ladder as definitions
//     or Terraform;
//   - DiscoverRequest and ScopesByVhost (which vhosts discover reads,
//     what an unreadable one does) and DelaysIn (their delay inventories,
//     delayed retry from the same listing: ReadRetryListed);
//   - StatusRequest, DoctorScope, ParseTarget, the migrate input checks,
//     ParsePublishRate and ReadBody, BuildInfo.
//
// An InputError is a refusal for what the operator asked: the CLI exits
// 2. A FieldError names the input field a refusal is about, for a form.
// An InterruptedError is an operation the operator stopped part way: the
// CLI exits 130 and says what was done. ExitCode is the one mapping of how
// a command ended to its exit code (an *InputError or a refused flag is a
// usage error); RefuseReadOnly stops a mutating command in read-only mode.
//
// ops decides and builds; it does not print or draw. Pure rules it needs
// live in topology (route checks, header syntax, a message's story) and
// health (ladder health); ops adds what needs broker types.
//
// Import direction (TestOpsDocImports keeps this list true): ops imports
// broker, health and topology, and is imported by bench, cli, exporter,
// internal/lab, model and ui. ui only draws ops values (the CLI's text
// output of what an operation returned); it never runs an operation.
package ops
