// Package health judges a ladder's queues: which rung is stuck, which
// queue is missing or drifted, what each row of the ladder view says about
// itself. It is pure domain code: it imports topology and the standard
// library only, so the CLI (status, doctor), the console and the
// benchmarks share one set of rules, and ui only draws what it decides.
package health
