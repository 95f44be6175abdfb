// Package topology is the pure model of a RabbitMQ delay ladder: what a ladder
// is, the exchanges, queues and bindings that make it up (its plan), the
// routing key that spells a delay, the path a delay takes (its trace), how a
// broker's actual objects differ from the plan (drift), and which ladders a
// broker holds (discovery).
//
// It performs no I/O, reads no clock and keeps no globals: every function is
// a deterministic function of its arguments, so the same code serves the CLI,
// the console, the retry library and the tests.
package topology
