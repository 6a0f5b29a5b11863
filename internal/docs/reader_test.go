package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A reader reads a document against the tree at root and lists what it cites that is
// not there.
type reader struct {
	root  string
	funcs map[string][]string // package directory -> top-level functions of its _test.go files
}

func newReader(root string) *reader {
	return &reader{root: root, funcs: map[string][]string{}}
}

// A quote is a command or a code span of a document, with the line it starts on.
type quote struct {
	line int
	text string
}

var (
	codeSpan    = regexp.MustCompile("`([^`]+)`")
	fence       = regexp.MustCompile("^\\s*```")
	scriptPath  = regexp.MustCompile(`(?:^|[^\w./-])((?:scripts/[\w.-]+\.sh)|(?:\.ci/[\w.-]+))`)
	goTool      = regexp.MustCompile(`\bgo (test|run|build)\b`)
	testBinary  = regexp.MustCompile(`\.test\b.*-test\.(run|bench|fuzz)\b`)
	otherModule = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+/`)
	date        = regexp.MustCompile(`\b20\d\d-[01]\d-[0-3]\d\b`)
	loadFigure  = regexp.MustCompile(`\b\d+\.\d\d?\b`)
	unrecorded  = regexp.MustCompile(`(?i)\bnot recorded\b`)
)

// quotes returns the document's code: every line of a fenced or indented code block (a
// line ending in a backslash joined with the next), and every code span elsewhere.
func quotes(md string) []quote {
	var out []quote
	lines := strings.Split(md, "\n")
	inFence, inIndented := false, false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		blank := strings.TrimSpace(line) == ""
		indented := strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
		// An indented block starts after a blank line and goes on while lines stay indented.
		inIndented = indented && !blank && (inIndented || i == 0 || strings.TrimSpace(lines[i-1]) == "")
		if inFence || inIndented {
			start, text := i, strings.TrimSpace(line)
			for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
			}
			out = append(out, quote{line: start + 1, text: text})
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			// A pipe inside a table's code span is written \|.
			out = append(out, quote{line: i + 1, text: strings.ReplaceAll(m[1], `\|`, "|")})
		}
	}
	return out
}

// check lists what the document md (named name) quotes that does not exist.
func (r *reader) check(name, md string) []string {
	var problems []string
	report := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	for i, line := range strings.Split(md, "\n") {
		for _, m := range scriptPath.FindAllStringSubmatch(line, -1) {
			if _, err := os.Stat(filepath.Join(r.root, m[1])); err != nil {
				report(i+1, "%s does not exist", m[1])
			}
		}
	}
	for _, p := range tableShapes(md) {
		report(p.line, "%s", p.text)
	}
	for _, q := range quotes(md) {
		if testBinary.MatchString(q.text) {
			report(q.line, "%q runs a test binary: write it as go test, which names its package", q.text)
		}
		for _, loc := range goTool.FindAllStringSubmatchIndex(q.text, -1) {
			verb := q.text[loc[2]:loc[3]]
			for _, p := range r.checkGo(verb, shellWords(q.text[loc[1]:])) {
				report(q.line, "%s", p)
			}
		}
	}
	return problems
}

// tableShapes lists the table rows whose cells do not line up with their header's. A
// table splits a row at every '|' not written '\|', inside code spans too, so a pattern
// like 'TestA|TestB' in a cell must be written 'TestA\|TestB'.
func tableShapes(md string) []tableRow {
	var problems []tableRow
	header, inFence := -1, false
	for i, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "|") {
			header = -1
			continue
		}
		cells := len(unescapedPipe.FindAllStringIndex(line, -1))
		switch {
		case header < 0:
			header = cells
		case cells != header:
			problems = append(problems, tableRow{line: i + 1, text: fmt.Sprintf(
				"a table row with %d cell separators where its header has %d (a '|' in a cell is written '\\|')", cells, header)})
		}
	}
	return problems
}

var unescapedPipe = regexp.MustCompile(`(?:^|[^\\])\|`)

// shellWords splits a command's arguments as a shell would, up to the end of the command
// (an unquoted ;, &, |, ), > or #).
func shellWords(s string) []string {
	var words []string
	var word strings.Builder
	inWord := false
	var quoteChar rune
	flush := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	for _, c := range s {
		switch {
		case quoteChar != 0:
			if c == quoteChar {
				quoteChar = 0
			} else {
				word.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quoteChar, inWord = c, true
		case c == ' ' || c == '\t':
			flush()
		case strings.ContainsRune(";&|)>#", c):
			flush()
			return words
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	flush()
	return words
}

// valueFlags are the go command's flags that take the next word as their value.
var valueFlags = map[string]bool{
	"run": true, "bench": true, "fuzz": true, "skip": true, "benchtime": true, "count": true,
	"cpu": true, "timeout": true, "fuzztime": true, "cpuprofile": true, "memprofile": true,
	"blockprofile": true, "mutexprofile": true, "o": true, "tags": true, "coverprofile": true,
	"parallel": true, "shuffle": true, "exec": true, "p": true, "covermode": true,
	"outputdir": true, "trace": true, "list": true, "ldflags": true, "gcflags": true, "pgo": true,
}

// checkGo checks one go test, go run or go build: its packages exist, and every name
// pattern matches a function of theirs.
func (r *reader) checkGo(verb string, args []string) []string {
	var problems []string
	patterns := map[string]string{} // flag -> pattern
	var dirs []string
	external := false // a tool from another module: go run golang.org/x/perf/cmd/benchstat@latest
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			flag, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasValue && valueFlags[flag] && i+1 < len(args) {
				value, hasValue = args[i+1], true
				i++
			}
			if hasValue && (flag == "run" || flag == "bench" || flag == "fuzz") {
				patterns[flag] = value
			}
			continue
		}
		if !strings.HasPrefix(a, "./") && !strings.HasPrefix(a, "backpressure/") && a != "." {
			if otherModule.MatchString(a) && len(dirs) == 0 {
				external = true
				break
			}
			continue // a program's own arguments (go run ./cmd/x sub -flag …)
		}
		found, err := r.packageDirs(a)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case len(found) == 0:
			problems = append(problems, fmt.Sprintf("go %s: package %s does not exist", verb, a))
		}
		dirs = append(dirs, found...)
		if verb == "run" {
			break // what follows is the program's
		}
	}
	if len(dirs) == 0 && len(problems) == 0 && !external {
		problems = append(problems, fmt.Sprintf("go %s %s names no package of this module", verb, strings.Join(args, " ")))
	}
	if len(dirs) == 0 {
		return problems
	}
	kinds := map[string][]string{"run": {"Test", "Fuzz", "Example"}, "bench": {"Benchmark"}, "fuzz": {"Fuzz"}}
	for _, flag := range []string{"run", "bench", "fuzz"} {
		pattern, ok := patterns[flag]
		if !ok {
			continue
		}
		for _, alt := range alternatives(topLevel(pattern)) {
			if alt == "^$" {
				continue // "run nothing", how a benchmark command skips the tests
			}
			re, err := regexp.Compile(alt)
			if err != nil {
				problems = append(problems, fmt.Sprintf("-%s %q: %v", flag, pattern, err))
				continue
			}
			if !r.anyFunc(dirs, kinds[flag], re) {
				problems = append(problems, fmt.Sprintf("-%s %q: no %s matching %q in %s",
					flag, pattern, strings.Join(kinds[flag], ", "), alt, strings.Join(r.rel(dirs), " ")))
			}
		}
	}
	return problems
}

// packageDirs resolves a package pattern (./x, ./x/..., backpressure/x) to the
// directories holding Go files.
func (r *reader) packageDirs(pattern string) ([]string, error) {
	p := strings.TrimPrefix(strings.TrimPrefix(pattern, "backpressure"), "./")
	p = strings.TrimPrefix(p, "/")
	recursive := false
	if p == "..." || strings.HasSuffix(p, "/...") {
		recursive = true
		p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
	}
	base := filepath.Join(r.root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
	if !recursive {
		if hasGo(base) {
			return []string{base}, nil
		}
		return nil, nil
	}
	var dirs []string
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != base && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() && hasGo(path) {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("package %s: %w", pattern, err)
	}
	return dirs, nil
}

func hasGo(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

func (r *reader) rel(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		rel, err := filepath.Rel(r.root, d)
		if err != nil {
			rel = d
		}
		out = append(out, "./"+filepath.ToSlash(rel))
	}
	return out
}

// anyFunc reports whether a test function of one of prefixes, in one of dirs, matches re.
func (r *reader) anyFunc(dirs, prefixes []string, re *regexp.Regexp) bool {
	for _, dir := range dirs {
		for _, name := range r.testFuncs(dir) {
			for _, prefix := range prefixes {
				if strings.HasPrefix(name, prefix) && re.MatchString(name) {
					return true
				}
			}
		}
	}
	return false
}

// testFuncs lists the top-level functions of a directory's _test.go files.
func (r *reader) testFuncs(dir string) []string {
	if names, ok := r.funcs[dir]; ok {
		return names
	}
	var names []string
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	fset := token.NewFileSet()
	for _, f := range files {
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			continue // a file that does not parse fails go vet, not this reader
		}
		for _, decl := range parsed.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				names = append(names, fn.Name.Name)
			}
		}
	}
	r.funcs[dir] = names
	return names
}

// topLevel is the part of a -run or -bench pattern that names the top-level functions:
// up to the first '/' outside brackets and parentheses, as the testing package splits it.
func topLevel(pattern string) string {
	return splitOutside(pattern, '/')[0]
}

// alternatives splits a pattern at its top-level '|'s.
func alternatives(pattern string) []string {
	return splitOutside(pattern, '|')
}

func splitOutside(s string, sep rune) []string {
	var parts []string
	depth, start := 0, 0
	escaped, inClass := false, false
	for i, c := range s {
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// A tableRow is a data row of a markdown table, with its line number.
type tableRow struct {
	line int
	text string
}

// firstTable returns the data rows of the first table at or after line index from, and
// whether there was one before the next heading.
func firstTable(lines []string, from int) ([]tableRow, bool) {
	for i := from; i < len(lines); i++ {
		if i > from && strings.HasPrefix(lines[i], "#") {
			return nil, false
		}
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		var rows []tableRow
		for j := i + 2; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			rows = append(rows, tableRow{line: j + 1, text: lines[j]})
		}
		return rows, true
	}
	return nil, false
}

// hasCommand reports whether a table row quotes a command: go test, go run or a script.
func hasCommand(row string) bool {
	for _, m := range codeSpan.FindAllStringSubmatch(row, -1) {
		if goTool.MatchString(m[1]) || scriptPath.MatchString(m[1]) {
			return true
		}
	}
	return false
}

// frontPage checks the first table of a document: every row carries a date and a command.
func frontPage(name, md string) []string {
	lines := strings.Split(md, "\n")
	rows, ok := firstTable(lines, max(0, slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "|") })))
	if !ok {
		return []string{name + ": no table of current figures"}
	}
	if len(rows) == 0 {
		return []string{name + ": the front-page table has no rows"}
	}
	var problems []string
	for _, r := range rows {
		if !date.MatchString(r.text) {
			problems = append(problems, fmt.Sprintf("%s:%d: a front-page figure without a date (YYYY-MM-DD)", name, r.line))
		}
		if !hasCommand(r.text) {
			problems = append(problems, fmt.Sprintf("%s:%d: a front-page figure without its command (`go test …` or `scripts/….sh`)", name, r.line))
		}
		if load := lastCell(r.text); !loadFigure.MatchString(load) && !strings.HasPrefix(load, "—") {
			problems = append(problems, fmt.Sprintf("%s:%d: a front-page figure without the load average it was taken at (or \"—\" for one that is not a timing)", name, r.line))
		}
	}
	return problems
}

// lastCell is the text of a table row's last cell.
func lastCell(row string) string {
	cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(row), "|"), "|")
	return strings.TrimSpace(cells[len(cells)-1])
}

// unrecordedLoads finds figures published without the load average they were taken at: on
// a shared machine a timing means little without it, so none is published "not recorded".
func unrecordedLoads(name, md string) []string {
	var problems []string
	for i, line := range strings.Split(md, "\n") {
		if unrecorded.MatchString(line) {
			problems = append(problems, fmt.Sprintf("%s:%d: a figure whose load average was not recorded: retake it", name, i+1))
		}
	}
	return problems
}

// evidence checks the table under the heading named section: every row names the command
// that holds it.
func evidence(name, md, section string) []string {
	lines := strings.Split(md, "\n")
	at := slices.IndexFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "#") && strings.Contains(strings.ToLower(l), strings.ToLower(section))
	})
	if at < 0 {
		return []string{fmt.Sprintf("%s: no section %q", name, section)}
	}
	rows, ok := firstTable(lines, at)
	if !ok || len(rows) == 0 {
		return []string{fmt.Sprintf("%s:%d: section %q has no table", name, at+1, section)}
	}
	var problems []string
	for _, r := range rows {
		if !hasCommand(r.text) {
			problems = append(problems, fmt.Sprintf("%s:%d: a row of %q names no test or script that holds it", name, r.line, section))
		}
	}
	return problems
}

// citation finds a section of BENCHMARKS.md or RELIABILITY.md cited by its name:
// `"Seasons" in BENCHMARKS.md`, `RELIABILITY.md ("Attacks and their bounds", …)`.
var citation = []*regexp.Regexp{
	regexp.MustCompile(`"([^"]{3,80})" in (BENCHMARKS|RELIABILITY)\.md`),
	regexp.MustCompile(`(BENCHMARKS|RELIABILITY)\.md,? \(("[^"]{3,80}")`),
}

// citations lists the sections that text cites, as document -> names.
func citations(text string) map[string][]string {
	text = regexp.MustCompile(`\s*\n\s*(//\s?|#\s?)?`).ReplaceAllString(text, " ")
	out := map[string][]string{}
	for _, m := range citation[0].FindAllStringSubmatch(text, -1) {
		out[m[2]+".md"] = append(out[m[2]+".md"], m[1])
	}
	for _, m := range citation[1].FindAllStringSubmatch(text, -1) {
		out[m[1]+".md"] = append(out[m[1]+".md"], strings.Trim(m[2], `"`))
	}
	return out
}

// headings lists a document's headings, lower case.
func headings(md string) []string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "#") {
			out = append(out, strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#"))))
		}
	}
	return out
}

// hasSection reports whether a heading of md contains name.
func hasSection(md, name string) bool {
	name = strings.ToLower(name)
	return slices.ContainsFunc(headings(md), func(h string) bool { return strings.Contains(h, name) })
}
