package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rungs-dev/rungs/cli"
	"github.com/rungs-dev/rungs/internal/examples"
)

// The docs are checked like code: the CLI reference is generated, every
// relative link resolves, every `rungs …` example parses, and the user docs
// name neither this project's internal issue numbers nor its tests.

// userDocs are the pages written for users: the README and docs/, less the
// developer pages, which may name tests.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "ARCHITECTURE.md"}
	err := filepath.WalkDir("docs", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func isDeveloperDoc(p string) bool {
	return p == "ARCHITECTURE.md" || strings.HasPrefix(p, filepath.Join("docs", "development"))
}

func isGenerated(p string) bool {
	return strings.HasPrefix(p, filepath.Join("docs", "cli")+string(filepath.Separator))
}

func TestCLIReferenceIsCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := cli.WriteReference(cli.ReferenceRoot(), dir); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	have, _ := filepath.Glob(filepath.Join("docs", "cli", "*.md"))
	const fix = "the CLI reference is out of date: run `go run . docs docs/cli` and commit docs/cli"
	if len(want) != len(have) {
		t.Fatalf("%s (%d pages generated, %d committed)", fix, len(want), len(have))
	}
	for _, w := range want {
		got, err := os.ReadFile(filepath.Join("docs", "cli", filepath.Base(w)))
		if err != nil {
			t.Fatalf("%s: %v", fix, err)
		}
		exp, _ := os.ReadFile(w)
		if !bytes.Equal(got, exp) {
			t.Errorf("%s: docs/cli/%s differs", fix, filepath.Base(w))
		}
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence    = regexp.MustCompile("^\\s*(```|~~~)")
	headingR = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
)

// anchors are the heading ids GitHub gives a page: lower case, punctuation
// dropped except hyphens and underscores, spaces as hyphens, repeats
// numbered.
func anchors(t *testing.T, p string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := headingR.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		id := slug(m[2])
		if n := seen[id]; n > 0 {
			ids[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

func slug(h string) string {
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestDocLinksResolve(t *testing.T) {
	checked := 0
	for _, p := range markdownFiles(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(data), "\n") {
			if fence.MatchString(line) {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := p
				if file != "" {
					dest = filepath.Join(filepath.Dir(p), file)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", p, i+1, target, dest)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", p, i+1, target, dest, frag)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the walk is broken")
	}
	t.Logf("%d relative links resolve", checked)
}

// commandLines are the `rungs …` lines of a page's fenced blocks, a shell
// prompt and trailing comments left out, continuation lines joined.
func commandLines(data []byte) (lines []string, at []int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	inFence, n, pending, start, margin := false, 0, "", 0, ""
	for sc.Scan() {
		n++
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			margin = line[:len(line)-len(strings.TrimLeft(line, " "))]
			continue
		}
		if !inFence {
			continue
		}
		// Commands start at the fence's margin; a screen capture's first
		// line (" rungs  guest@…") is indented and is not one.
		s := strings.TrimRight(strings.TrimPrefix(line, margin), " \t")
		if pending != "" {
			s = strings.TrimSpace(s)
			pending += " " + strings.TrimSuffix(s, "\\")
			if !strings.HasSuffix(s, "\\") {
				lines, at = append(lines, pending), append(at, start)
				pending = ""
			}
			continue
		}
		s = strings.TrimPrefix(s, "$ ")
		if !strings.HasPrefix(s, "rungs ") && s != "rungs" {
			continue
		}
		if strings.HasSuffix(s, "\\") {
			pending, start = strings.TrimSuffix(s, "\\"), n
			continue
		}
		lines, at = append(lines, s), append(at, n)
	}
	return lines, at
}

// shellWords splits a command line as sh would, for what the docs use:
// quotes, backslashes, a comment, and the end of the command at a pipe,
// redirection or separator.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case !inWord && (c == '#' || c == '|' || c == '>' || c == '<' || c == ';' || c == '&'):
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestDocCommandsParse(t *testing.T) {
	checked := 0
	for _, p := range markdownFiles(t) {
		if isGenerated(p) {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines, at := commandLines(data)
		for i, line := range lines {
			words, err := shellWords(line)
			if err != nil {
				t.Errorf("%s:%d: %q: %v", p, at[i], line, err)
				continue
			}
			if err := examples.Check(words[1:]); err != nil {
				t.Errorf("%s:%d: %q does not parse: %v", p, at[i], line, err)
			}
			if err := expires(line); err != nil {
				t.Errorf("%s:%d: %q: %v", p, at[i], line, err)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no rungs command lines found in the docs")
	}
	t.Logf("%d command examples parse", checked)
}

var fixedDate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})(T[0-9:.]+(Z|[+-]\d{2}:\d{2})?)?`)

// expires says whether an example names a fixed time less than a year from
// now: such an example stops working soon after it is written. Examples
// use spans from now, clock times, or dates decades ahead.
func expires(line string) error {
	for _, m := range fixedDate.FindAllString(line, -1) {
		var when time.Time
		var err error
		if strings.Contains(m, "T") {
			when, err = time.Parse(time.RFC3339, m)
		} else {
			when, err = time.Parse(time.DateOnly, m)
		}
		if err != nil {
			continue
		}
		if when.Before(time.Now().AddDate(1, 0, 0)) {
			return fmt.Errorf("names %s, less than a year from now: use a span from now (--delay 30m, --at 2h), a clock time (--at 09:00) or a date decades ahead", m)
		}
	}
	return nil
}

// Every --help example parses too: the reference pages show them.
func TestHelpExamplesParse(t *testing.T) {
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			s := strings.TrimSpace(line)
			if !strings.HasPrefix(s, "rungs ") && s != "rungs" {
				continue
			}
			words, err := shellWords(s)
			if err == nil {
				err = examples.Check(words[1:])
			}
			if err != nil {
				t.Errorf("%s --help: %q does not parse: %v", c.CommandPath(), s, err)
			}
			if err := expires(s); err != nil {
				t.Errorf("%s --help: %q: %v", c.CommandPath(), s, err)
			}
			checked++
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.ReferenceRoot())
	if checked == 0 {
		t.Fatal("no --help examples found")
	}
	t.Logf("%d --help examples parse", checked)
}

var (
	internalIssue = regexp.MustCompile(`(?i)\bissues? \d+\b`)
	testName      = regexp.MustCompile(`\b(Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]+`)
	// How rungs was made is not a user's business: the numbered studies it
	// started from, the issue a change answered, what else ran on the
	// machine that built it, and its code (the retry library is public
	// API, so retry.X may be named).
	madeOf = []struct {
		re *regexp.Regexp
		// code: the benchmark pages cite the code they measured, and a
		// page that shows the Go library's use names its API.
		code bool
		why  string
	}{
		{regexp.MustCompile(`(?i)\bseeds?\s+\d{2,}\b`), false, "name what the study is (the Terraform ladder of the binary-ladder write-up), not its seed number"},
		{regexp.MustCompile(`(?i)\bthe\s+issue\b|\bthis\s+change\b`), false, "say what was asked or measured, not that an issue asked it"},
		{regexp.MustCompile(`(?i)\bother (agents?|sessions?|helpers?)\b|\bagents?'`), false, "give the load average a measurement ran at, not what else shared the machine"},
		{regexp.MustCompile(`\b(health|topology|ops|broker|model|ui|bench|cli|exporter|internal/testutil|e2e)/[a-z_/]+\.go\b`), true, "user docs do not name source files"},
		{regexp.MustCompile(`\b(health|topology|ops|broker|model|ui|bench|cli|exporter)\.[A-Z][A-Za-z]*`), true, "user docs do not name the code's identifiers"},
	}
)

// madeOfText reports the first phrase of s that talks about how rungs was
// made, and why it should not.
func madeOfText(s string, codeOK bool) (string, string) {
	for _, m := range madeOf {
		if m.code && codeOK {
			continue
		}
		if hit := m.re.FindString(s); hit != "" {
			return hit, m.why
		}
	}
	return "", ""
}

// --help talks to users as the pages do.
func TestHelpNamesNoInternals(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Short, c.Long, c.Example}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			if hit, why := madeOfText(s, false); hit != "" {
				t.Errorf("%s --help: %q: %s", c.CommandPath(), hit, why)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.ReferenceRoot())
}

func TestUserDocsNameNoInternals(t *testing.T) {
	for _, p := range markdownFiles(t) {
		if isDeveloperDoc(p) {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		codeOK := strings.HasPrefix(p, filepath.Join("docs", "benchmarks")) || bytes.Contains(data, []byte("```go"))
		for i, line := range strings.Split(string(data), "\n") {
			if m := internalIssue.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: user docs name studies by their question, not an internal issue number", p, i+1, m)
			}
			if m := testName.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: user docs do not name tests (docs/development does)", p, i+1, m)
			}
			if hit, why := madeOfText(line, codeOK); hit != "" {
				t.Errorf("%s:%d: %q: %s", p, i+1, hit, why)
			}
		}
	}
}

// The licence is in the repository, named by the README and shipped in every
// release archive.
func TestLicenseShipped(t *testing.T) {
	lic, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(lic, []byte("MIT License")) || !bytes.Contains(lic, []byte("The rungs authors")) {
		t.Errorf("LICENSE is not the MIT licence of the rungs authors")
	}
	readme, _ := os.ReadFile("README.md")
	if !bytes.Contains(readme, []byte("[LICENSE](LICENSE)")) || !bytes.Contains(readme, []byte("MIT")) {
		t.Errorf("README.md does not name the licence")
	}
	rel, _ := os.ReadFile(".goreleaser.yaml")
	if !regexp.MustCompile(`(?m)^\s+files:\n(\s+- .*\n)*\s+- LICENSE\n`).Match(rel) {
		t.Errorf(".goreleaser.yaml: archives.files does not include LICENSE")
	}
}

// The README's global flags are the root's persistent flags, all of them
// and no other.
func TestReadmeGlobalFlags(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(data), "**Global flags.**")
	if !ok {
		t.Fatal("README.md has no **Global flags.** paragraph")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(--[a-z-]+)").FindAllStringSubmatch(para, -1) {
		named[m[1]] = true
	}
	root := cli.ReferenceRoot()
	global := map[string]bool{}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { global["--"+f.Name] = true })
	for f := range global {
		if !named[f] {
			t.Errorf("README.md's global flags omit %s", f)
		}
	}
	for f := range named {
		// --yes is named as each changing command's own flag.
		if !global[f] && f != "--yes" {
			t.Errorf("README.md lists %s among the global flags; it is not one", f)
		}
	}
	if strings.Contains(para, "`--yes`") && !strings.Contains(para, "own `--yes`") {
		t.Error("README.md lists --yes among the global flags")
	}
}

// The README stays short enough to read through, and keeps its task table.
func TestReadmeShortWithTasks(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n >= 300 {
		t.Errorf("README.md has %d lines; keep it under 300 (details belong in docs/)", n)
	}
	for _, task := range []string{"find a message", "cancel it, and undo that", "replay dead letters", "purge one queue or a ladder", "tell a storm from a stall", "leave the delayed-message plugin"} {
		if !bytes.Contains(data, []byte("| "+task+" |")) {
			t.Errorf("README.md's How do I table has no row %q", task)
		}
	}
}

// Every picture in docs/images is made by scripts/screenshot.sh from a real
// console run, so that pictures are made again when a view changes.
func TestPicturesHaveAScript(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("scripts", "screenshot.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pics, _ := filepath.Glob(filepath.Join("docs", "images", "*.png"))
	if len(pics) == 0 {
		t.Fatal("no pictures in docs/images")
	}
	for _, p := range pics {
		name := strings.TrimSuffix(filepath.Base(p), ".png")
		if !regexp.MustCompile(`(?m)^\s*(\w+=\S+ )*shoot ` + regexp.QuoteMeta(name) + ` `).Match(script) {
			t.Errorf("%s is not made by scripts/screenshot.sh (no `shoot %s`)", p, name)
		}
	}
}
