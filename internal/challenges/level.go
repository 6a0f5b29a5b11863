package challenges

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"backpressure/internal/sim"
)

// Level is one challenge as its author wrote it. Values come from Parse or Campaign, which
// also check it; a Level built any other way cannot be evaluated.
type Level struct {
	// Schema is the editor's "$schema" reference; it is ignored.
	Schema     string     `json:"$schema,omitempty"`
	Slug       string     `json:"slug"`
	Title      string     `json:"title"`
	Briefing   string     `json:"briefing"` // Markdown
	Difficulty Difficulty `json:"difficulty"`
	Version    int        `json:"version"`
	// History says what changed in each version, oldest first; its last entry is Version.
	History []Revision `json:"history,omitempty"`
	Run     Run        `json:"run"`
	SLA     SLA        `json:"sla"`
	// BudgetPerHour caps the mean cost per hour over the evaluation window, in dollars.
	BudgetPerHour float64     `json:"budget_per_hour"`
	Resilience    *Resilience `json:"resilience,omitempty"`
	Catalog       Catalog     `json:"catalog"`
	// StartingDesign is what the player starts from. It must fail.
	StartingDesign sim.Design `json:"starting_design"`
	// StartingFails is why the starting design fails, as its verdict says; Parse checks it.
	StartingFails *StartingFails `json:"starting_fails,omitempty"`
	// Stars are the scores that earn a passing run its second and third star.
	Stars *Stars `json:"stars,omitempty"`
	// Lesson is what the level teaches: mechanics a passing design cannot leave out.
	Lesson *Lesson `json:"lesson,omitempty"`

	c *compiled // derived by Parse
}

// StartingFails is why a level's starting design fails, in the verdict's own terms: the
// checks it fails (its conditions, then its structural failures, as Evaluation.Failing
// lists them) and the component and cause of each stretch of "why it happened" (each pair
// once, in the order it first appears; none when no stretch fails). Parse runs the
// starting design and refuses the level when it fails another way, so that the story the
// briefing tells is the one the player's first run shows.
type StartingFails struct {
	Checks []string    `json:"checks"`
	Causes []FailCause `json:"causes,omitempty"`
}

// FailCause is one component and cause named by "why it happened".
type FailCause struct {
	Component string    `json:"component"`
	Cause     sim.Cause `json:"cause"`
}

func (f FailCause) String() string { return f.Component + " " + string(f.Cause) }

// failCauses lists the component and cause of each of ev's stretches, each pair once, in
// the order it first appears.
func failCauses(ev *Evaluation) []FailCause {
	var out []FailCause
	for _, w := range ev.Why {
		fc := FailCause{Component: w.Component, Cause: w.Cause}
		if !slices.Contains(out, fc) {
			out = append(out, fc)
		}
	}
	return out
}

// checkStartingFails compares the starting design's verdict with what the level says of it.
func (l *Level) checkStartingFails(ev *Evaluation, ps *Problems) {
	want := l.StartingFails
	if want == nil {
		return
	}
	if got := ev.Failing(); !slices.Equal(got, want.Checks) {
		ps.addf("starting_fails.checks", "the starting design fails %s, not %s", quoteList(got), quoteList(want.Checks))
	}
	if got := failCauses(ev); !slices.Equal(got, want.Causes) {
		ps.addf("starting_fails.causes", "why it happened names %s, not %s", causeList(got), causeList(want.Causes))
	}
}

func causeList(fcs []FailCause) string {
	if len(fcs) == 0 {
		return "no failing stretch"
	}
	words := make([]string, len(fcs))
	for i, fc := range fcs {
		words[i] = fc.String()
	}
	return strings.Join(words, ", ")
}

func (l *Level) validateStartingFails(ps *Problems) {
	f := l.StartingFails
	if f == nil {
		return
	}
	if len(f.Checks) == 0 {
		ps.add("starting_fails.checks", "names at least one check the starting design fails")
	}
	for i, fc := range f.Causes {
		if !slices.ContainsFunc(l.StartingDesign.Components, func(c sim.Component) bool { return c.ID == fc.Component }) {
			ps.addf(index("starting_fails.causes", i)+".component", "%q is not a component of the starting design", fc.Component)
		}
	}
}

// Revision is one entry of a level's history: what a version changed, in words a player
// reads ("the health checks notice a dead backend sooner; the figures moved").
type Revision struct {
	Version int    `json:"version"`
	Change  string `json:"change"`
}

// maxHistory bounds a level's history; maxChangeLen one entry's text, in characters.
const (
	maxHistory   = 100
	maxChangeLen = 500
)

// Difficulty ranks a level on the campaign's curve.
type Difficulty string

// Difficulties, easiest first.
const (
	Tutorial Difficulty = "tutorial"
	Easy     Difficulty = "easy"
	Medium   Difficulty = "medium"
	Hard     Difficulty = "hard"
	Expert   Difficulty = "expert"
)

// Difficulties lists the difficulties, easiest first.
func Difficulties() []Difficulty { return []Difficulty{Tutorial, Easy, Medium, Hard, Expert} }

// Rank is the difficulty's position on the curve (0 for tutorial), -1 if unknown.
func (d Difficulty) Rank() int { return slices.Index(Difficulties(), d) }

// Run is the engine configuration of a level: everything about a run but the player's
// design and the catalog (which the level's Catalog gives).
type Run struct {
	TickMs       float64          `json:"tick_ms,omitempty"`
	DurationSec  float64          `json:"duration_sec"`
	Traffic      sim.Traffic      `json:"traffic"`
	Mix          sim.Mix          `json:"mix"`
	Client       sim.Client       `json:"client"`
	WorkingSetGB float64          `json:"working_set_gb,omitempty"`
	Chaos        []sim.ChaosEvent `json:"chaos,omitempty"`
}

// SLA is what users of the system are promised over the evaluation window.
type SLA struct {
	P99LatencyMs float64 `json:"p99_latency_ms"`
	ErrorRate    float64 `json:"error_rate"`
}

// Resilience is what must hold around every chaos event (see Evaluate).
type Resilience struct {
	// ErrorCeiling caps the mean error rate during each event.
	ErrorCeiling float64 `json:"error_ceiling"`
	// RecoveryDeadlineSec caps the time from the end of each event until the system is back
	// within its pre-event baseline, as the engine measures it.
	RecoveryDeadlineSec float64 `json:"recovery_deadline_sec"`
}

// Catalog is what the player may build with.
type Catalog struct {
	// Components lists the component types the player may use, with their rules.
	Components map[sim.Kind]KindRules `json:"components"`
	// InstanceTypes adds instance types to the engine's default price list or replaces
	// entries of it by name.
	InstanceTypes map[string]sim.InstanceType `json:"instance_types,omitempty"`
}

// KindRules are the rules for one component type.
type KindRules struct {
	// MaxCount caps how many components of this type a design may have.
	MaxCount int `json:"max_count"`
	// InstanceTypes lists the instance types offered; empty means every type of this kind
	// in the price list.
	InstanceTypes []string `json:"instance_types,omitempty"`
	// Fixed sets parameters for every component of this type; a design may not change
	// them. Parameters that are properties of the level's world rather than choices
	// (service times, hit ratios, connections per node; see Knobs) are always fixed: at
	// the value given here, or else at the engine's default.
	Fixed map[string]json.RawMessage `json:"fixed,omitempty"`
	// Limits narrows the range of numeric knobs.
	Limits map[string]Range `json:"limits,omitempty"`
}

// Range bounds a numeric parameter; a missing end keeps the engine's bound.
type Range struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Limits on level documents. A run is re-simulated many times by the hint, so its length
// in ticks is bounded more tightly than the engine's own limit.
const (
	MaxLevelBytes    = 1 << 20
	MaxDesignBytes   = 256 << 10
	MaxLevelTicks    = 3000
	MaxBriefingBytes = 20_000
	maxTitleLen      = 100
	maxSlugLen       = 64
	// WarmupShare of the ticks is ignored by the evaluation (seed simulation-design).
	WarmupShare = 0.2
	// recoveryHoldSec is how long the engine requires a system to stay within its baseline
	// before it counts as recovered (sim/events.go); a level must leave room for it.
	recoveryHoldSec = 5
)

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Parse decodes and checks a level document. Every problem is reported at once, as
// Problems, each with its JSON path; unknown fields are problems. A level whose starting
// design passes is invalid.
func Parse(data []byte) (*Level, error) {
	return parse(context.Background(), data, true)
}

// Decode is Parse without running the starting design: every check of the document, no
// simulation. It is for a level that was parsed in full when it was stored (reading it
// back must never simulate) and for a server that runs the starting design on workers of
// its own with CheckStart.
func Decode(data []byte) (*Level, error) {
	return parse(context.Background(), data, false)
}

// CheckStart runs the starting design, within ctx: a level whose starting design passes
// (or cannot be evaluated) is invalid, and is left unusable. Decode then CheckStart is
// Parse.
func (l *Level) CheckStart(ctx context.Context) error {
	_, err := l.StartVerdict(ctx)
	return err
}

// StartVerdict is CheckStart that also returns the starting design's verdict (without its
// ticks, as Verdict), so that an author can see why it fails.
func (l *Level) StartVerdict(ctx context.Context) (*Evaluation, error) {
	if l.c == nil {
		return nil, ErrNotParsed
	}
	var ps Problems
	ev, err := l.Verdict(ctx, l.StartingDesign)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		ps.addf("starting_design", "cannot be evaluated: %v", err)
	case ev.Passed:
		ps.addf("starting_design", "passes every condition untouched (score %d); a starting design must fail, so the player has something to fix", *ev.Score)
	default:
		l.checkStartingFails(ev, &ps)
	}
	if len(ps) > 0 {
		l.c = nil
		return nil, ps
	}
	return ev, nil
}

// parse is Parse; checkStart=false skips running the starting design (Decode).
func parse(ctx context.Context, data []byte, checkStart bool) (*Level, error) {
	var ps Problems
	if len(data) > MaxLevelBytes {
		ps.addf("", "is %d bytes; a level may have at most %d", len(data), MaxLevelBytes)
		return nil, ps
	}
	l := &Level{}
	if !decodeStrict(data, l, "", &ps) {
		return nil, ps
	}
	structural := map[string]bool{}
	for _, p := range ps {
		structural[p.Path] = true
	}
	var sem Problems
	l.validate(ctx, &sem, checkStart)
	// A field that could not be decoded is reported once, as decoded, not again as missing.
	for _, p := range sem {
		if !covered(p.Path, structural) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return l, nil
}

// validate checks everything but the JSON shape and derives the compiled form.
func (l *Level) validate(ctx context.Context, ps *Problems, checkStart bool) {
	switch {
	case l.Slug == "":
		ps.add("slug", "is required")
	case len(l.Slug) > maxSlugLen:
		ps.addf("slug", "is longer than %d characters", maxSlugLen)
	case !slugPattern.MatchString(l.Slug):
		ps.add("slug", "must be lowercase letters and digits in words joined by single hyphens, like \"cache-me-if-you-can\"")
	}
	switch n := utf8.RuneCountInString(strings.TrimSpace(l.Title)); {
	case n == 0:
		ps.add("title", "is required")
	case n > maxTitleLen:
		ps.addf("title", "is longer than %d characters", maxTitleLen)
	}
	switch {
	case strings.TrimSpace(l.Briefing) == "":
		ps.add("briefing", "is required: tell the player what the system does and what is expected of it")
	case len(l.Briefing) > MaxBriefingBytes:
		ps.addf("briefing", "is longer than %d bytes", MaxBriefingBytes)
	}
	if l.Difficulty.Rank() < 0 {
		ps.addf("difficulty", "must be one of %s, not %q", quoteList(Difficulties()), l.Difficulty)
	}
	if l.Version < 1 {
		ps.add("version", "must be at least 1 (bump it whenever the level changes)")
	}
	l.validateHistory(ps)
	l.validateStars(ps)
	l.validateLesson(ps)
	l.validateStartingFails(ps)
	positive(ps, "sla.p99_latency_ms", l.SLA.P99LatencyMs, 3_600_000)
	if finite(ps, "sla.error_rate", l.SLA.ErrorRate) && (l.SLA.ErrorRate <= 0 || l.SLA.ErrorRate >= 1) {
		ps.addf("sla.error_rate", "must be a share between 0 and 1 (exclusive), like 0.01 for 1%%, not %g", l.SLA.ErrorRate)
	}
	positive(ps, "budget_per_hour", l.BudgetPerHour, 1e6)
	if r := l.Resilience; r != nil {
		if finite(ps, "resilience.error_ceiling", r.ErrorCeiling) && (r.ErrorCeiling <= 0 || r.ErrorCeiling > 1) {
			ps.addf("resilience.error_ceiling", "must be a share above 0 and at most 1, not %g", r.ErrorCeiling)
		}
		positive(ps, "resilience.recovery_deadline_sec", r.RecoveryDeadlineSec, 86_400)
	} else if len(l.Run.Chaos) > 0 {
		ps.add("resilience", "is required when run.chaos schedules events: set error_ceiling and recovery_deadline_sec")
	}

	c, catalogOK := l.compileCatalog(ps)
	l.validateRun(c, ps)
	// The starting design is checked like a player's (when the catalog's rules are known),
	// and the engine checks it with the run configuration in any case, so that an author
	// sees every problem of the file at once.
	eff := l.StartingDesign
	if catalogOK {
		var dps Problems
		eff, dps = c.prepareDesign(l, l.StartingDesign, false)
		for _, p := range dps {
			ps.add(join("starting_design", p.Path), p.Reason)
		}
	}
	if err := sim.Validate(eff, c.cfg); err != nil {
		var sp sim.Problems
		if !errors.As(err, &sp) {
			ps.add("", err.Error())
			return
		}
		*ps = mergeProblems(*ps, fromSim(sp, levelPath))
	}
	if len(*ps) > 0 || !catalogOK {
		return
	}
	l.c = c
	if !checkStart {
		return
	}
	// Then it must fail.
	if err := l.CheckStart(ctx); err != nil {
		if sp, ok := AsProblems(err); ok {
			*ps = append(*ps, sp...)
		} else {
			ps.addf("starting_design", "cannot be evaluated: %v", err)
		}
	}
}

// levelPath maps an engine path onto the level document: configuration paths live under
// run, design paths under starting_design, catalog entries under catalog.instance_types.
func levelPath(p string) string {
	head, _, _ := strings.Cut(p, ".")
	head, _, _ = strings.Cut(head, "[")
	switch head {
	case "components", "edges":
		return join("starting_design", p)
	case "catalog":
		return "catalog.instance_types" + strings.TrimPrefix(p, "catalog")
	}
	return join("run", p)
}

func (l *Level) validateRun(c *compiled, ps *Problems) {
	r := &l.Run
	tick := r.TickMs
	if tick == 0 {
		tick = 100
	}
	l.validateTraffic(tick, ps)
	if tick > 0 && r.DurationSec > 0 {
		if n := math.Ceil(r.DurationSec * 1000 / tick); n > MaxLevelTicks {
			ps.addf("run.duration_sec", "gives %.0f ticks of %g ms; a level may have at most %d (raise run.tick_ms or shorten the run: the hint re-runs the level many times)", n, tick, MaxLevelTicks)
		}
		if w := l.WorstCaseCost(); w > MaxLevelRunCost {
			ps.addf("run.duration_sec", "gives a worst-case run cost of %d path-ticks (%d ticks × (%d request paths, the most the catalog's components permit, + %d for the traffic points, chaos events and retries each tick works through)); a level may cost at most %d: shorten the run, raise run.tick_ms, lower catalog max_count or use fewer traffic points, chaos events or retries",
				w, l.Ticks(), l.maxPaths(), l.tickOverhead(), MaxLevelRunCost)
		}
	}
	if len(r.Chaos) == 0 || r.DurationSec <= 0 {
		return
	}
	warm := WarmupShare * r.DurationSec
	for i, e := range r.Chaos {
		p := index("run.chaos", i)
		if e.AtSec < warm {
			ps.addf(p+".at_sec", "is %g s, inside the warm-up (the first %g s), which the evaluation ignores", e.AtSec, warm)
		}
		if l.Resilience == nil {
			continue
		}
		end := e.AtSec + e.DurationSec
		if e.Kind == sim.ChaosCacheFlush {
			end = e.AtSec + c.flushWarmup(l, e)
		}
		need := end + l.Resilience.RecoveryDeadlineSec + recoveryHoldSec
		if need > r.DurationSec+1e-9 {
			ps.addf(p, "ends at %g s; with a recovery deadline of %g s the run must last at least %g s (the engine needs %d s of health to call a system recovered)",
				end, l.Resilience.RecoveryDeadlineSec, need, recoveryHoldSec)
		}
	}
}

// MinTrafficRPS is the smallest non-zero rate a level's traffic may name: rates closer to
// zero than this say nothing a player can see, and denormal rates make latencies infinite.
const MinTrafficRPS = 0.001

// validateTraffic adds the level's own rules to the engine's checks of the traffic curve:
// a wave's period lasts at least one tick (a shorter one is sampled as noise, and a period
// of 5e-324 makes every metric NaN), and every rate is 0 or at least MinTrafficRPS.
func (l *Level) validateTraffic(tickMs float64, ps *Problems) {
	tr := &l.Run.Traffic
	rate := func(path string, x float64) {
		if !math.IsNaN(x) && x > 0 && x < MinTrafficRPS {
			ps.addf(path, "is %g req/s; a rate must be 0 or at least %g req/s", x, MinTrafficRPS)
		}
	}
	rate("run.traffic.rps", tr.RPS)
	if tr.Kind == "ramp" {
		rate("run.traffic.to_rps", tr.ToRPS)
	}
	if tr.Kind == "wave" {
		rate("run.traffic.amplitude_rps", tr.AmplitudeRPS)
		if tickMs > 0 && tr.PeriodSec > 0 && tr.PeriodSec < tickMs/1000 {
			ps.addf("run.traffic.period_sec", "is %g s, shorter than one tick (%g ms); a wave's period must last at least one tick", tr.PeriodSec, tickMs)
		}
	}
	for i, s := range tr.Steps {
		rate(index("run.traffic.steps", i)+".rps", s.RPS)
	}
	for i, s := range tr.Spikes {
		rate(index("run.traffic.spikes", i)+".rps", s.RPS)
	}
}

// Config returns the engine configuration of the level, with its effective catalog.
func (l *Level) Config() sim.Config {
	if l.c == nil {
		return sim.Config{}
	}
	cfg := l.c.cfg
	cfg.Chaos = slices.Clone(cfg.Chaos)
	cfg.Catalog = maps.Clone(cfg.Catalog)
	return cfg
}

// ContentHash identifies the level's content: the SHA-256 of its canonical JSON.
func (l *Level) ContentHash() string {
	b, _ := json.Marshal(l)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// WarmupSec is the end of the warm-up: ticks ending at or before it are not evaluated.
func (l *Level) WarmupSec() float64 { return WarmupShare * l.Run.DurationSec }

func positive(ps *Problems, path string, x, hi float64) {
	if finite(ps, path, x) && (x <= 0 || x > hi) {
		ps.addf(path, "must be above 0 and at most %g, not %g", hi, x)
	}
}

func finite(ps *Problems, path string, x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		ps.add(path, "must be a finite number")
		return false
	}
	return true
}

func quoteList[T ~string](xs []T) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// validateHistory: versions rise from entry to entry, the last is the level's version,
// and every entry says something.
func (l *Level) validateHistory(ps *Problems) {
	h := l.History
	if len(h) == 0 {
		return
	}
	if len(h) > maxHistory {
		ps.addf("history", "has %d entries; a level may keep at most %d", len(h), maxHistory)
		return
	}
	for i, c := range h {
		p := index("history", i)
		switch {
		case c.Version < 1:
			ps.addf(p+".version", "must be at least 1, not %d", c.Version)
		case i > 0 && c.Version <= h[i-1].Version:
			ps.addf(p+".version", "is %d; versions rise from entry to entry (the one before is %d)", c.Version, h[i-1].Version)
		}
		switch n := utf8.RuneCountInString(strings.TrimSpace(c.Change)); {
		case n == 0:
			ps.add(p+".change", "is required: say what this version changed")
		case n > maxChangeLen:
			ps.addf(p+".change", "is longer than %d characters", maxChangeLen)
		}
	}
	if last := h[len(h)-1].Version; last != l.Version && l.Version >= 1 {
		ps.addf(index("history", len(h)-1)+".version", "is %d; the last entry is the level's version, %d", last, l.Version)
	}
}
