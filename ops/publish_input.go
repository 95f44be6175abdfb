package ops

import (
	"errors"
	"os"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// ParsePublishRate reads a publish rate as typed: "" for none (as fast as
// confirms allow, up to MaxUnpaced messages), "max" for Unpaced, else a
// rate such as 500/s (topology.ParseRate).
func ParsePublishRate(s string) (float64, error) {
	switch s {
	case "":
		return 0, nil
	case "max":
		return Unpaced, nil
	}
	return topology.ParseRate(s)
}

// ReadBody reads a message body as typed: @FILE is the file's content,
// refused before it is read when it is over MaxBody; anything else is the
// body itself, whose size Delayed.Check refuses. A refusal is an
// *InputError worded for --body.
func ReadBody(spec string) ([]byte, error) {
	path, isFile := strings.CutPrefix(spec, "@")
	if !isFile {
		return []byte(spec), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, badInput("--body: %v", err)
	}
	if fi.Size() > MaxBody {
		return nil, badInput("--body: %s is %d bytes; the broker accepts at most %d", path, fi.Size(), MaxBody)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--body: %v", err)
	}
	return body, nil
}

// ErrLadderNotFound is why a publish was refused when the vhost was read
// and its ladder is not there.
var ErrLadderNotFound = errors.New("ladder not found")

// PlanFound is Plan for a ladder that was looked for on the broker: g is
// the vhost's bindings (nil: not read) and found says the ladder is
// there. A ladder that is not there is refused (ErrLadderNotFound) only
// once its trace is known good, so that a bad delay or destination is
// said first.
func (r PublishRequest) PlanFound(g *topology.Graph, found bool) (Delayed, error) {
	if found {
		return r.Plan(g)
	}
	d, err := r.Plan(nil)
	if err == nil && g != nil {
		return d, ErrLadderNotFound
	}
	return d, err
}
