package model

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// minInterval is the fastest refresh `:refresh` accepts: the management
// API's statistics do not change faster, and a tighter loop only loads it.
const minInterval = time.Second

// runCommand executes one `:` command line.
func (a App) runCommand(line string) (App, tea.Cmd) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return a, nil
	}
	name, args := fields[0], fields[1:]
	switch name {
	case "q", "q!", "quit", "qa", "exit":
		return a, tea.Quit
	case "help", "h":
		return a, a.openHelp()
	case "ladders", "ls", "home":
		a.leaveLadder()
		return a, nil
	case "ladder", "l", "open":
		if len(args) != 1 {
			return a.fail("usage: :ladder NAME")
		}
		f, err := a.findLadder(args[0])
		if err != nil {
			return a.fail(err.Error())
		}
		a.openLadder(f)
		return a, nil
	case "trace", "t":
		return a.traceCommand(args)
	case "publish", "pub", "p":
		return a.publishCommand(args)
	case "purge":
		if len(args) != 1 {
			return a.fail("usage: :purge QUEUE or :purge LADDER")
		}
		return a.purgeCommand(args[0])
	case "peek":
		return a.peekCommand(args)
	case "replay":
		return a.replayCommand(args)
	case "refresh", "r":
		return a.refreshCommand(args)
	case "log":
		return a, a.openLog()
	case "bridges", "bridge":
		return a, a.openSide(sideBridges)
	case "retry", "delayed":
		return a, a.openSide(sideRetry)
	case "ctx", "context":
		return a.ctxCommand(args)
	case "drift", "cost", "forecast":
		if a.screen != screenLadder {
			return a.fail(":" + name + " works in a ladder; open one first")
		}
		a.ladder.TogglePanel(name)
		return a, nil
	}
	return a.fail(fmt.Sprintf("unknown command %q (? lists commands)", name))
}

// fail reports a command error in the header.
func (a App) fail(text string) (App, tea.Cmd) {
	a.result = ui.Result{Kind: ui.ResultError, Text: text}
	return a, nil
}

// findLadder finds a ladder by exact name, then by unique prefix.
func (a App) findLadder(name string) (topology.Found, error) {
	f, err := ops.FindLadder(a.found, ops.LadderQuery{Name: name, Prefix: true})
	switch {
	case errors.Is(err, ops.ErrNoLadder) && !a.loaded:
		return f, fmt.Errorf("ladders are still loading from vhost %s", a.vhost)
	case errors.Is(err, ops.ErrNoLadder):
		return f, fmt.Errorf("no ladder %q in vhost %s", name, a.vhost)
	}
	return f, err
}

// contextLadder is the ladder a command applies to: the open one, else the
// one under the cursor in the list.
func (a App) contextLadder() (topology.Found, bool) {
	if a.screen == screenLadder {
		return a.ladder.Found(), true
	}
	return a.list.Selected()
}

func (a App) traceCommand(args []string) (App, tea.Cmd) {
	f, ok := a.contextLadder()
	if !ok {
		return a.fail("no ladder to trace in; open one first")
	}
	if len(args) == 0 {
		return a.fail("usage: :trace DELAY [DEST], e.g. :trace 90s")
	}
	if a.screen != screenLadder {
		a.openLadder(f)
	}
	a.ladder.SetTrace(strings.Join(args, " "))
	return a, nil
}

func (a App) publishCommand(args []string) (App, tea.Cmd) {
	if a.readOnly {
		return a.refuse("publishing")
	}
	f, ok := a.contextLadder()
	if !ok {
		return a.fail("no ladder to publish into; open one first")
	}
	var delay, dest string
	count := 0
	if len(args) > 0 {
		delay = args[0]
	}
	if len(args) > 1 {
		dest = args[1]
	}
	if len(args) > 2 {
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			return a.fail(fmt.Sprintf("count %q is not a positive number", args[2]))
		}
		count = n
	}
	if len(args) > 3 {
		return a.fail("usage: :publish [DELAY [DEST [COUNT]]]")
	}
	return a, a.openPublish(f.Ladder, delay, dest, count)
}

func (a App) purgeCommand(name string) (App, tea.Cmd) {
	if a.readOnly {
		return a.refuse("purging")
	}
	if _, ok := a.merged().Queue(name); ok {
		return a.openPurge(ops.PurgeRequest{Queue: name})
	}
	if f, err := a.findLadder(name); err == nil {
		return a.purgeLadder(f.Ladder)
	}
	// Not a ladder, nor a queue of the ladders on screen: another
	// application's queue, read by name.
	return a.withQueue(name, wantPurge, 0)
}

func (a App) refreshCommand(args []string) (App, tea.Cmd) {
	if len(args) == 0 {
		restart := a.loop.restart()
		return a, restart
	}
	text := args[0]
	if _, err := strconv.Atoi(text); err == nil {
		text += "s" // :refresh 10 means seconds, as --refresh does
	}
	d, err := topology.ParseDelay(text)
	if err != nil || d < minInterval {
		return a.fail(fmt.Sprintf("refresh interval %q: want a duration of at least 1s, e.g. :refresh 10s", args[0]))
	}
	a.result = ui.Result{Kind: ui.ResultOK, Text: "refreshing every " + topology.FormatSpan(d)}
	restart := a.loop.setInterval(d, a.overview.StatsInterval)
	return a, restart
}

// refuse explains that an action is off in read-only mode.
func (a App) refuse(what string) (App, tea.Cmd) {
	a.result = ui.Result{Kind: ui.ResultWarn, Text: "read-only: " + what + " is switched off (--read-only)"}
	return a, nil
}

// suggestions are the completions offered on the command line.
func (a App) suggestions() []string {
	s := []string{"ladders", "trace ", "publish", "refresh", "drift", "cost", "forecast", "help", "quit", "log", "ctx", "bridges", "retry"}
	for _, c := range a.contexts {
		s = append(s, "ctx "+c)
	}
	for _, f := range a.found {
		s = append(s, "ladder "+f.Ladder.Name)
	}
	if a.screen == screenLadder {
		for _, r := range a.ladder.Rows() {
			s = append(s, "purge "+r.Queue, "peek "+r.Queue, "replay "+r.Queue)
		}
		s = append(s, "purge "+a.ladder.Found().Ladder.Name)
	}
	sort.Strings(s)
	return s
}
