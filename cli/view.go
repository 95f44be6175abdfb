package cli

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
