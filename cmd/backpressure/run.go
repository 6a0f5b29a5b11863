package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"backpressure/internal/challenges"
	"backpressure/internal/sim"
)

// Exit codes.
const (
	exitPass     = 0
	exitFail     = 1
	exitInvalid  = 2
	exitInternal = 3
)

// exitError carries an exit code; main prints its message, if any, to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// errFailed: the design was evaluated and fails. The verdict is already printed.
var errFailed = &exitError{code: exitFail, msg: "the design fails"}

func invalidf(format string, args ...any) error {
	return &exitError{code: exitInvalid, msg: fmt.Sprintf(format, args...)}
}

func exitCode(err error) int {
	if err == nil {
		return exitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if _, ok := challenges.AsProblems(err); ok {
		return exitInvalid
	}
	return exitInternal
}

const usage = `usage: backpressure COMMAND [flags]

commands:
  validate LEVEL_FILE...                     check level files; every problem with its JSON path
  run  --level SLUG|FILE --design FILE|-     run a design: conditions, score, why it happened, chart
  hint --level SLUG|FILE --design FILE|-     the smallest single change that makes it pass
  levels                                     list the built-in campaign
  difficulty SOLUTIONS_DIR                   the campaign's difficulty table, measured with the
                                             reference solutions in SOLUTIONS_DIR (SLUG.json)
  level SLUG|FILE                            the briefing: targets, clients, traffic, chaos, prices
  init SLUG|FILE [DESIGN_FILE]               write the level's starting design to a file to edit
                                             (default SLUG.design.json; never overwrites)
  events                                     list a server's events
  event ID                                   an event: rules, briefing, standings (and its chaos, once over)
  seasons                                    list a server's seasons (the global board's resets)
  season ID                                  a season's board (a past season's: its final ranks)
  player ID                                  a player: their seasons and event results
  duel challenge PLAYER_ID LEVEL             challenge a player to a duel on a level
  duel match LEVEL                           ask to be matched with a player of similar rating
  duel accept|decline ID                     answer a challenge
  duel submit ID DESIGN_FILE                 submit your design (once; the other side's stays hidden)
  duel show ID                               a duel: both verdicts side by side and the surprise, once over
  duel list                                  your duels
  ratings                                    the duel ratings board

flags:
  --json     print the machine-readable result
  --width N  chart width in columns (default: $COLUMNS, else 60)
  --server U the server for events, seasons, players and duels (default: $BACKPRESSURE_SERVER, else http://localhost:8080)
  --token T  your player token for duels (default: $BACKPRESSURE_TOKEN)

exit codes: 0 valid / passes, 1 fails, 2 invalid input, 3 internal error
`

// run is the whole program; main only maps its error to an exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return &exitError{code: exitInvalid}
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	fs.BoolVar(&o.json, "json", false, "")
	fs.StringVar(&o.level, "level", "", "")
	fs.StringVar(&o.design, "design", "", "")
	fs.IntVar(&o.width, "width", 0, "")
	fs.StringVar(&o.server, "server", "", "")
	fs.StringVar(&o.token, "token", "", "")
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		fmt.Fprint(stderr, usage)
		return invalidf("%s: %v", cmd, err)
	}
	if o.width == 0 {
		o.width, _ = strconv.Atoi(getenv("COLUMNS"))
		o.width -= 22 // room for the row labels and the scale
	}
	if o.width < 10 {
		o.width = 60
	}
	o.width = min(o.width, 200)
	o.stdin, o.stdout = stdin, stdout
	if o.server == "" {
		o.server = getenv("BACKPRESSURE_SERVER")
	}
	if o.server == "" {
		o.server = defaultServer
	}
	if o.token == "" {
		o.token = getenv("BACKPRESSURE_TOKEN")
	}
	switch cmd {
	case "validate":
		if len(pos) == 0 {
			return invalidf("validate: name at least one level file")
		}
		return cmdValidate(ctx, o, pos)
	case "run", "hint":
		if len(pos) > 0 {
			return invalidf("%s: unexpected argument %q (use --level and --design)", cmd, pos[0])
		}
		if o.level == "" || o.design == "" {
			return invalidf("%s: --level and --design are required", cmd)
		}
		if cmd == "run" {
			return cmdRun(ctx, o)
		}
		return cmdHint(ctx, o)
	case "levels":
		return cmdLevels(o)
	case "difficulty":
		if len(pos) != 1 {
			return invalidf("difficulty: name the directory of reference solutions")
		}
		return cmdDifficulty(ctx, o, pos[0])
	case "level":
		if len(pos) != 1 {
			return invalidf("level: name one level (a slug or a file)")
		}
		return cmdLevel(ctx, o, pos[0])
	case "init":
		if len(pos) < 1 || len(pos) > 2 {
			return invalidf("init: name one level (a slug or a file) and, optionally, the design file to write")
		}
		file := ""
		if len(pos) == 2 {
			file = pos[1]
		}
		return cmdInit(ctx, o, pos[0], file)
	case "events":
		return cmdEvents(ctx, o)
	case "event":
		if len(pos) != 1 {
			return invalidf("event: name one event id")
		}
		return cmdEvent(ctx, o, pos[0])
	case "seasons", "season", "player":
		return cmdSeasons(ctx, o, cmd, pos)
	case "duel":
		return cmdDuel(ctx, o, pos)
	case "ratings":
		return cmdRatings(ctx, o)
	}
	fmt.Fprint(stderr, usage)
	return invalidf("unknown command %q", cmd)
}

type options struct {
	json          bool
	level, design string
	width         int
	server        string
	token         string
	stdin         io.Reader
	stdout        io.Writer
}

// parseInterleaved lets flags follow positional arguments (validate a.json --json).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func cmdValidate(ctx context.Context, o options, files []string) error {
	type fileResult struct {
		File     string              `json:"file"`
		Valid    bool                `json:"valid"`
		Slug     string              `json:"slug,omitempty"`
		Version  int                 `json:"version,omitempty"`
		Problems challenges.Problems `json:"problems"`
	}
	var results []fileResult
	invalid := 0
	for _, f := range files {
		r := fileResult{File: f, Problems: challenges.Problems{}}
		data, err := os.ReadFile(f)
		if err != nil {
			r.Problems = challenges.Problems{{Path: "", Reason: "cannot be read: " + errText(err)}}
		} else if l, err := challenges.Parse(data); err != nil {
			ps, ok := challenges.AsProblems(err)
			if !ok {
				return err
			}
			r.Problems = ps
		} else {
			r.Valid, r.Slug, r.Version = true, l.Slug, l.Version
		}
		if !r.Valid {
			invalid++
		}
		results = append(results, r)
	}
	if o.json {
		if err := writeJSON(o.stdout, results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Valid {
				fmt.Fprintf(o.stdout, "%s: ok (%s v%d)\n", r.File, r.Slug, r.Version)
				continue
			}
			fmt.Fprintf(o.stdout, "%s: %d problem(s)\n", r.File, len(r.Problems))
			printProblems(o.stdout, r.Problems)
		}
	}
	if invalid > 0 {
		return &exitError{code: exitInvalid}
	}
	return nil
}

func cmdRun(ctx context.Context, o options) error {
	l, d, err := loadInputs(ctx, o)
	if err != nil {
		return err
	}
	ev, err := l.Evaluate(ctx, d)
	if err != nil {
		return reportInvalid(o, "design", err)
	}
	if o.json {
		if err := writeJSON(o.stdout, ev); err != nil {
			return err
		}
	} else {
		printEvaluation(o.stdout, l, ev, o.width)
		r := l.CostEstimate(d)
		fmt.Fprintf(o.stdout, "cost estimated before the run: $%.3f–$%.3f/h (units idle to autoscaled ceilings and peak attempts)\n", r.Low, r.High)
	}
	if !ev.Passed {
		return errFailed
	}
	return nil
}

func cmdHint(ctx context.Context, o options) error {
	l, d, err := loadInputs(ctx, o)
	if err != nil {
		return err
	}
	h, err := l.Hint(ctx, d)
	if err != nil {
		return reportInvalid(o, "design", err)
	}
	if o.json {
		if err := writeJSON(o.stdout, h); err != nil {
			return err
		}
	} else {
		printHint(o.stdout, l, h, o.width)
	}
	// The exit code is the verdict on the design as given.
	if !h.Before.Passed {
		return errFailed
	}
	return nil
}

func cmdLevels(o options) error {
	levels, err := challenges.Campaign()
	if err != nil {
		return err
	}
	if o.json {
		type row struct {
			Slug       string                `json:"slug"`
			Title      string                `json:"title"`
			Difficulty challenges.Difficulty `json:"difficulty"`
			Version    int                   `json:"version"`
			Stars      *challenges.Stars     `json:"stars,omitempty"`
		}
		rows := make([]row, len(levels))
		for i, l := range levels {
			rows[i] = row{l.Slug, l.Title, l.Difficulty, l.Version, l.Stars}
		}
		return writeJSON(o.stdout, rows)
	}
	fmt.Fprintf(o.stdout, "%2s  %-24s %-4s %-10s %-11s %s\n", "#", "level", "", "difficulty", "★★ / ★★★", "title")
	for i, l := range levels {
		par := ""
		if l.Stars != nil {
			par = fmt.Sprintf("%d / %d", l.Stars.Two, l.Stars.Three)
		}
		fmt.Fprintf(o.stdout, "%2d  %-24s v%-3d %-10s %-11s %s\n", i+1, l.Slug, l.Version, l.Difficulty, par, l.Title)
	}
	return nil
}

// loadInputs reads the level (a campaign slug or a file) and the design (a file or -).
func loadInputs(ctx context.Context, o options) (*challenges.Level, sim.Design, error) {
	l, err := loadLevel(ctx, o.level)
	if err != nil {
		return nil, sim.Design{}, err
	}
	var data []byte
	if o.design == "-" {
		data, err = io.ReadAll(io.LimitReader(o.stdin, challenges.MaxDesignBytes+1))
	} else {
		data, err = os.ReadFile(o.design)
	}
	if err != nil {
		return nil, sim.Design{}, invalidf("design: %s", errText(err))
	}
	d, err := challenges.ParseDesign(data)
	if err != nil {
		if documentKind(data) == "level" {
			return nil, sim.Design{}, invalidf("design: %s is a level file, not a design: pass it as --level %s, and write its starting design to edit with: backpressure init %s", o.design, o.design, o.design)
		}
		return nil, sim.Design{}, reportInvalid(o, "design", err)
	}
	return l, d, nil
}

// documentKind tells a level file from a design by their top-level fields: "level",
// "design" or "" (neither, or not a JSON object). Passing one for the other is the common
// mistake, and its dozen "unknown field" problems would hide it.
func documentKind(data []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return ""
	}
	_, slug := top["slug"]
	_, starting := top["starting_design"]
	_, catalog := top["catalog"]
	_, components := top["components"]
	switch {
	case starting || catalog || (slug && !components):
		return "level"
	case components && !slug:
		return "design"
	}
	return ""
}

func loadLevel(ctx context.Context, ref string) (*challenges.Level, error) {
	if !strings.ContainsAny(ref, "/\\") && !strings.HasSuffix(ref, ".json") {
		l, err := challenges.CampaignLevel(ref)
		if err != nil {
			return nil, invalidf("level: %v (see: backpressure levels)", err)
		}
		return l, nil
	}
	data, err := os.ReadFile(ref)
	if err != nil {
		return nil, invalidf("level: %s", errText(err))
	}
	l, err := challenges.Parse(data)
	if err != nil {
		if documentKind(data) == "design" {
			return nil, invalidf("level: %s is a design, not a level file: pass it as --design %s, and the level as --level SLUG or a level file (see: backpressure levels)", ref, ref)
		}
		if ps, ok := challenges.AsProblems(err); ok {
			var b strings.Builder
			fmt.Fprintf(&b, "level %s is invalid (run: backpressure validate %s):\n", ref, ref)
			printProblems(&b, ps)
			return nil, invalidf("%s", strings.TrimRight(b.String(), "\n"))
		}
		return nil, err
	}
	return l, nil
}

// reportInvalid prints a design's problems (as the command's result) and returns exit 2.
func reportInvalid(o options, what string, err error) error {
	ps, ok := challenges.AsProblems(err)
	if !ok {
		return err
	}
	if o.json {
		if err := writeJSON(o.stdout, struct {
			Valid    bool                `json:"valid"`
			Problems challenges.Problems `json:"problems"`
		}{false, ps}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.stdout, "The %s is invalid: %d problem(s)\n", what, len(ps))
		printProblems(o.stdout, ps)
	}
	return &exitError{code: exitInvalid}
}

func printProblems(w io.Writer, ps challenges.Problems) {
	for _, p := range ps {
		path := p.Path
		if path == "" {
			path = "(document)"
		}
		fmt.Fprintf(w, "  %s: %s\n", path, p.Reason)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// errText drops the Go-specific "open " prefix noise from file errors.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
