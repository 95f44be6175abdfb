package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/broker"
)

// Exit codes of a front end that ends with one (the CLI). Drift has its own
// so that `rungs plan` can gate a deploy; an operation the operator
// stopped (an *InterruptedError) exits as a shell's command stopped by ^C.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitDrift       = 3
	ExitInterrupted = 130
)

// Coded is an error that carries its own exit code (the CLI's usage and
// drift errors).
type Coded interface {
	error
	ExitCode() int
}

// ExitCode is the one classification of how a command ended into its exit
// code: nil is ExitOK; an error carrying a code (Coded) has it; an
// interrupted operation exits ExitInterrupted; a flag the parser refused
// or an *InputError is ExitUsage; anything else ExitError.
func ExitCode(err error) int {
	var (
		c  Coded
		ie *InterruptedError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &c):
		return c.ExitCode()
	case errors.As(err, &ie):
		return ExitInterrupted
	case IsFlagError(err), IsInputError(err):
		return ExitUsage
	}
	return ExitError
}

// flagErrorTexts are what cobra's and pflag's parse errors say.
var flagErrorTexts = []string{"unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "unknown command", "accepts ", "requires at least", "required flag", "if any flags in the group"}

// IsFlagError recognises the command line parser's errors (cobra's and
// pflag's), which are usage errors even though ops did not make them.
func IsFlagError(err error) bool {
	s := err.Error()
	for _, p := range flagErrorTexts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// RefuseReadOnly stops a mutating operation, what, before it opens a
// connection when the configuration is read-only (--read-only or the
// context's read_only).
func RefuseReadOnly(cfg broker.Config, what string) error {
	if cfg.ReadOnly {
		return fmt.Errorf("%s: %w", what, broker.ErrReadOnly)
	}
	return nil
}
