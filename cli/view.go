package cli

import (
	"bufio"
	"fmt"

	"github.com/rungs-dev/rungs/ops"
)

// view is what a report needs of an invocation: where to write, how wide,
// whether as JSON, and whether a person is there to see progress or to
// answer. It holds no broker client, so what only prints cannot reach the
// broker.
type view struct {
	IO
	json bool
}

// view is built once flags are parsed: --json is known only then.
func (e *env) view() view { return view{IO: e.IO, json: e.opts.json} }

// width is how wide human output may be: the terminal's, else 100.
func (v view) width() int {
	if v.Width > 0 {
		return v.Width
	}
	return 100
}

// confirm asks the operator to type a word before a destructive action. It
// returns nil when yes (--yes) says so, and refuses outright when nobody
// can answer (stdin is not a terminal), so a script never destroys by
// accident.
func (v view) confirm(yes bool, what, word string) error {
	if yes {
		return nil
	}
	if !v.Interactive {
		return ops.NeedsYes(what, word)
	}
	fmt.Fprintf(v.Err, "%s\nType %q to confirm: ", what, word)
	line, err := bufio.NewReader(v.In).ReadString('\n')
	return ops.Confirmation(line, err, word)
}
