package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/ops"
)

// The flags given override the preset (DefaultOptions, or SmokeOptions
// with --smoke); the others keep it. A refusal is one line and bad input.
func TestInputOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    Input
		want  string // a refusal's text, or "" for success
		check func(Options) bool
	}{
		{"defaults", Input{}, "", func(o Options) bool {
			return !o.Smoke && o.Levels == 24 && o.Unit == time.Millisecond && len(o.Radixes) == 2 && len(o.Layouts) == 3
		}},
		{"set but not given", Input{Set: Options{Levels: 3, Rounds: 9}}, "", func(o Options) bool { return o.Levels == 24 && o.Rounds == 3 }},
		{"given", Input{Set: Options{Levels: 12, Rounds: 2, Quorum: false, Seed: 7}, Given: []string{"levels", "rounds", "quorum", "seed"}}, "", func(o Options) bool {
			return o.Levels == 12 && o.Rounds == 2 && !o.Quorum && o.Seed == 7
		}},
		{"loads", Input{Loads: []string{"50", "max"}, Given: []string{"loads"}}, "", func(o Options) bool {
			return len(o.Loads) == 2 && o.Loads[0] == 50 && o.Loads[1] == 0
		}},
		{"smoke", Input{Smoke: true, Duration: "2s", Given: []string{"smoke", "duration"}}, "", func(o Options) bool {
			return o.Smoke && o.MaxMessages > 0 && o.Duration == 2*time.Second && o.Levels == 8
		}},
		{"phases", Input{Set: Options{Phases: []string{"punctuality"}}, Given: []string{"phases"}}, "", func(o Options) bool {
			return len(o.Phases) == 1 && o.Phases[0] == "punctuality"
		}},
		{"bad load", Input{Loads: []string{"fast"}, Given: []string{"loads"}}, `--loads: "fast" is not a positive rate or max`, nil},
		{"negative load", Input{Loads: []string{"-5"}, Given: []string{"loads"}}, `--loads: "-5"`, nil},
		{"bad radix", Input{Set: Options{Radixes: []int{2, 3}}, Given: []string{"radix"}}, "--radix 3: want 2, 4, 8 or 16", nil},
		{"bad duration", Input{Duration: "soon", Given: []string{"duration"}}, "--duration: ", nil},
		{"zero duration", Input{Duration: "0s", Given: []string{"duration"}}, "--duration must be positive", nil},
		{"no rounds", Input{Given: []string{"rounds"}}, "--rounds must be at least 1", nil},
		{"negative size", Input{Set: Options{Size: -1}, Given: []string{"size"}}, "--size must not be negative", nil},
		{"bad phase", Input{Set: Options{Phases: []string{"nonesuch"}}, Given: []string{"phases"}}, `no phase "nonesuch"`, nil},
		{"bad bits", Input{Set: Options{DelayBits: 30}, Given: []string{"delay-bits"}}, "30 delay bits", nil},
		{"drain flag", Input{Given: []string{"capacity"}}, "--capacity goes with --drain", nil},
		{"inflow", Input{Inflow: "10/s"}, "--inflow goes with --drain", nil},
	} {
		o, err := tc.in.Options()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && !tc.check(o):
			t.Errorf("%s: %+v", tc.name, o)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !ops.IsInputError(err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want bad input with %q", tc.name, err, tc.want)
		}
	}
}

func TestInputDrainOptions(t *testing.T) {
	ok := Input{Drain: 10, DrainDelay: "20s", InflowFor: "4m"}
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"no messages", func(in *Input) { in.Drain = 0 }, "--drain 0: want at least 1 message"},
		{"record nowhere", func(in *Input) { in.Record = "/nonesuch/dir/rec.json" }, "--record /nonesuch/dir/rec.json: no such directory"},
		{"bad delay", func(in *Input) { in.DrainDelay = "soon" }, `--drain-delay "soon"`},
		{"zero delay", func(in *Input) { in.DrainDelay = "0s" }, `--drain-delay "0s"`},
		{"negative capacity", func(in *Input) { in.Capacity = -1 }, "--capacity -1"},
		{"bad inflow", func(in *Input) { in.Inflow = "lots" }, "--inflow lots"},
		{"infinite inflow", func(in *Input) { in.Inflow = "+Inf/s" }, "--inflow +Inf/s"},
		{"bad inflow-for", func(in *Input) { in.Inflow, in.InflowFor = "10/s", "ever" }, "--inflow-for ever"},
	} {
		in := ok
		tc.edit(&in)
		if _, err := in.DrainOptions(); err == nil || !strings.Contains(err.Error(), tc.want) || !ops.IsInputError(err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	in := ok
	in.Inflow, in.Record, in.Capacity, in.Set.BrokerPID = "1500/s", t.TempDir()+"/rec.json", 900, -1
	o, err := in.DrainOptions()
	if err != nil {
		t.Fatal(err)
	}
	if o.N != 10 || o.Delay != 20*time.Second || o.Inflow != 1500 || o.InflowFor != 4*time.Minute || o.Capacity != 900 || o.BrokerPID != -1 || o.Size != DefaultDrainOptions().Size {
		t.Errorf("%+v", o)
	}
	if !(Input{Given: []string{"seed", "drain"}}).IsDrain() || (Input{Drain: 5}).IsDrain() {
		t.Error("IsDrain reads whether --drain was given")
	}
}

func TestInputBridgeOptions(t *testing.T) {
	ok := Input{Bridge: 100, Given: []string{"bridge"}}
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"no messages", func(in *Input) { in.Bridge = 0 }, "--bridge 0: want at least 1 message"},
		{"with the drain", func(in *Input) { in.Given = append(in.Given, "drain") }, "--bridge and --drain are runs of their own"},
		{"a drain flag", func(in *Input) { in.Given = append(in.Given, "capacity") }, "--capacity goes with --drain"},
		{"inflow", func(in *Input) { in.Inflow = "10/s" }, "--inflow goes with --drain"},
		{"no rounds", func(in *Input) { in.Given = append(in.Given, "rounds") }, "--rounds 0: want at least 1"},
	} {
		in := ok
		in.Given = append([]string(nil), ok.Given...)
		tc.edit(&in)
		if _, err := in.BridgeOptions(); err == nil || !strings.Contains(err.Error(), tc.want) || !ops.IsInputError(err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	o, err := ok.BridgeOptions()
	if err != nil || o.N != 100 || o.Rounds != 3 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	in := ok
	in.Given = []string{"bridge", "rounds", "broker-pid"}
	in.Set.Rounds, in.Set.BrokerPID = 5, -1
	if o, err := in.BridgeOptions(); err != nil || o.Rounds != 5 || o.BrokerPID != -1 {
		t.Errorf("given: %+v, %v", o, err)
	}
	if !ok.IsBridge() || (Input{Bridge: 5}).IsBridge() {
		t.Error("IsBridge reads whether --bridge was given")
	}
}
