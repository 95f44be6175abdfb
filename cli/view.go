package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

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

// emit writes a command's result: asJSON with --json, else text. It is
// the one place a result honours --json, so no command can print text
// into a JSON stream or the other way round.
func (v view) emit(asJSON any, text string) error {
	if v.json {
		return writeJSON(v.Out, asJSON)
	}
	_, err := io.WriteString(v.Out, text)
	return err
}

// written is what write writes, for emit: ui's longer reports write to a
// writer.
func written(write func(io.Writer)) string {
	var b strings.Builder
	write(&b)
	return b.String()
}

// textOnly writes text to w (stdout or stderr) for a person reading text
// output; JSON output stays alone on stdout and quiet on stderr.
func (v view) textOnly(w io.Writer, text string) {
	if !v.json {
		fmt.Fprint(w, text)
	}
}

// watched says whether a person watches the terminal, for progress
// drawn on stderr: not a script, and not JSON output.
func (v view) watched() bool { return v.Interactive && !v.json }

// progress is draw when a person watches, else nil: operations take a
// nil progress function as none.
func progress[F any](v view, draw F) F {
	var none F
	if !v.watched() {
		return none
	}
	return draw
}

// every calls f at most once per interval: a progress line that a fast
// operation rewrites a thousand times a second would flicker and cost
// more than the work.
func every[P any](interval time.Duration, f func(P)) func(P) {
	var last time.Time
	return func(p P) {
		if time.Since(last) < interval {
			return
		}
		last = time.Now()
		f(p)
	}
}

// clearBar erases the line a progress bar rewrote, when one was drawn.
func (v view) clearBar() {
	if v.watched() {
		fmt.Fprint(v.Err, "\r\033[K")
	}
}

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
