// Package ops holds the operations a user can run from both the CLI and
// the console (publish a delayed message, plan a replay), so that each is
// written once and the two front ends cannot drift apart. It decides and
// builds; it does not print or draw. Pure rules it needs live in
// topology (route checks, header syntax) and health (ladder health); ops
// adds what needs broker types (messages, routers).
//
// Import direction: ops imports topology and broker, and is imported by
// cli and model. ui never imports ops.
package ops
