package ops

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rungs-dev/rungs/broker"
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

// PublishInput is what publish's flags ask, as typed.
type PublishInput struct {
	Delay, Rate, Body, To, ContentType, IDPrefix string
	Headers                                      []string
	Count                                        int
	Persistent                                   bool
}

// Request reads the input into a publish request and checks what needs
// no broker (PublishRequest.Check): the ladder is resolved later. Every
// refusal is an *InputError naming its flag.
func (in PublishInput) Request() (PublishRequest, error) {
	req := PublishRequest{Dest: in.To, Count: in.Count}
	var err error
	if req.Delay, err = topology.ParseDelay(in.Delay); err != nil {
		return req, badInput("--delay: %v", err)
	}
	if req.Rate, err = ParsePublishRate(in.Rate); err != nil {
		return req, badInput("--rate: %v (or max: as fast as confirms allow)", err)
	}
	headers, err := topology.ParseHeaders(in.Headers)
	if err != nil {
		return req, badInput("--header: %v", err)
	}
	body, err := ReadBody(in.Body)
	if err != nil {
		return req, err
	}
	req.Message = Delayed{Body: body, ContentType: in.ContentType, Headers: headers, Persistent: in.Persistent, IDPrefix: in.IDPrefix}
	if err := req.Check(); err != nil {
		return req, in.refused(err)
	}
	return req, nil
}

// refused words what PublishRequest.Check refused for the flag that asked.
func (in PublishInput) refused(err error) error {
	var fe *FieldError
	switch {
	case errors.Is(err, ErrNeedsRate):
		return badInput("--count %d needs --rate: more than %d messages at once could flood the broker; pass --rate 1000/s to pace them, or --rate max to publish as fast as confirms allow", in.Count, MaxUnpaced)
	case errors.As(err, &fe):
		return badInput("--%s %v", fe.Field, fe.Err)
	}
	return badInput("%v", err)
}

// PublishRefusal words why PlanFound refused a publish: a route that
// does not reach its destination, a ladder that is not there (notFound
// says which), else bad input. Nil stays nil.
func PublishRefusal(err error, notFound string) error {
	var re *RouteError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return fmt.Errorf("nothing published: a message for %s would not reach %s: %v", topology.FormatDelay(re.Trace.Delay), re.Trace.Target, re.Err)
	case errors.Is(err, ErrLadderNotFound):
		return fmt.Errorf("%s (rungs discover lists the ladders there; rungs apply creates one)", notFound)
	}
	return badInput("%v", err)
}

// BurstWarnings are the warnings said before n messages through tr are
// published at rate: how late the burst arrives, when caps holds a drain
// capacity that fits the ladder; none otherwise.
func BurstWarnings(n int, tr topology.Trace, caps map[string]broker.DrainCapacity, rate float64) []string {
	if f, ok := ForecastBurst(n, tr, caps, rate); ok {
		return []string{f.Warning(n, tr)}
	}
	return nil
}
