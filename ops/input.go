package ops

import (
	"errors"
	"fmt"
)

// InputError says an operation was refused for what the operator asked,
// not for what the broker did: a front end shows it as bad input (the
// CLI's usage exit code).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// badInput is an InputError from a format.
func badInput(format string, a ...any) error {
	return &InputError{fmt.Errorf(format, a...)}
}

// IsInputError reports whether err, or an error it wraps, is an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
