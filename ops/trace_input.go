package ops

import "github.com/rungs-dev/rungs/topology"

// TraceInput is what rungs trace was given: its arguments (at most a
// DELAY), --routing-key and --to.
type TraceInput struct {
	Args []string
	Key  string
	Dest string
}

// Check refuses, before any ladder is read, a trace given both a delay
// and a routing key, or neither.
func (in TraceInput) Check() error {
	if (len(in.Args) == 1) == (in.Key != "") {
		return badInput("trace needs a DELAY or --routing-key, not both")
	}
	return nil
}

// Request is the input as a trace through l: the delay read, unless a
// routing key is decoded instead. A delay that does not read is an
// *InputError.
func (in TraceInput) Request(l topology.Ladder) (TraceRequest, error) {
	req := TraceRequest{Ladder: l, Dest: in.Dest, Key: in.Key}
	if in.Key != "" {
		return req, nil
	}
	d, err := topology.ParseDelay(in.Args[0])
	if err != nil {
		return req, badInput("%v", err)
	}
	req.Delay = d
	return req, nil
}
