package broker

import (
	"errors"
	"fmt"
	"regexp"

	amqp "github.com/rabbitmq/amqp091-go"
)

// inequivalentRE reads RabbitMQ's PRECONDITION_FAILED text for a
// redeclaration with other arguments, e.g.
//
//	PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in
//	vhost 'v': received the value '1000' of type 'long' but current is the
//	value '999' of type 'long'
var inequivalentRE = regexp.MustCompile(`inequivalent arg '([^']*)' for (?:queue|exchange) '.*' in vhost '.*': received (.*) but current is (.*)$`)

// valueRE extracts a value from "the value '1000' of type 'long'" or "'topic'".
var valueRE = regexp.MustCompile(`^(?:the value )?'([^']*)'(?: of type '[^']*')?$`)

// declareError turns a PRECONDITION_FAILED answer into a *ConflictError and
// wraps anything else with the object it concerned.
func declareError(object, name string, err error) error {
	var aerr *amqp.Error
	if !errors.As(err, &aerr) || aerr.Code != amqp.PreconditionFailed {
		return fmt.Errorf("declare %s %q: %w", object, name, err)
	}
	return conflictError(object, name, aerr.Reason)
}

func conflictError(object, name, server string) *ConflictError {
	ce := &ConflictError{Object: object, Name: name, Server: server, Detail: server}
	m := inequivalentRE.FindStringSubmatch(server)
	if m == nil {
		return ce
	}
	ce.Argument = m[1]
	want, have := serverValue(m[2]), serverValue(m[3])
	ce.Detail = fmt.Sprintf("argument %s is %s, plan has %s (broker: %s)", m[1], have, want, server)
	return ce
}

// serverValue reads one side of an inequivalence; "none" means absent.
func serverValue(s string) string {
	if s == "none" {
		return "absent"
	}
	if m := valueRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}
