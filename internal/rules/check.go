package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

// LevelDraft is a level document an author wants checked: uploaded to be
// published, or sent to be tried before publishing.
type LevelDraft struct {
	// Document is the level's JSON.
	Document []byte
	// Field is the document's JSON path in the request body ("" when it is
	// the body), prefixed to the path of every problem found in it.
	Field string
	// Reference, if not empty, is a design the author says passes the
	// level; it is decoded, checked against the level and run with the
	// starting design. Its problems are reported under ReferenceField.
	Reference json.RawMessage
}

// ReferenceField is where a draft's reference design is in the request body.
const ReferenceField = "reference_design"

// LevelCheck is what checking a level found: its starting design fails (as
// it must), how a reference design fared, its cost bound, and whether its
// lesson can be skipped.
type LevelCheck struct {
	Slug      string       `json:"slug"`
	Start     DesignCheck  `json:"starting_design"`
	Reference *DesignCheck `json:"reference_design"`
	Cost      CostCheck    `json:"cost"`
	// Lesson is the lesson search's finding (challenges.CheckLesson), from
	// the reference design if given, else from the starting design; nil
	// for a level that declares no lesson.
	Lesson *LessonCheck `json:"lesson"`
	// Warnings are what the author should look at before publishing, each
	// at its field; none of them stops publishing.
	Warnings []game.FieldError `json:"warnings"`
	// Ready: the starting design fails and the reference design, if given,
	// passes.
	Ready bool `json:"ready"`
}

// LessonCheck is the lesson search's finding and the design it searched
// from ("reference_design" or "starting_design").
type LessonCheck struct {
	From string `json:"from"`
	*challenges.LessonCheck
}

// DesignCheck is one design's verdict on the level, summed up in words.
type DesignCheck struct {
	Passed bool `json:"passed"`
	// Summary says which conditions failed (and by how much), or, for a
	// passing design, its smallest margin.
	Summary string `json:"summary"`
	// RunCost is what the run cost, in path-ticks.
	RunCost    int64                  `json:"run_cost"`
	Evaluation *challenges.Evaluation `json:"evaluation"`
}

// CostCheck is the level's worst-case run cost against the server's ceiling
// (challenges.MaxLevelRunCost); a level over it is refused before any run.
type CostCheck struct {
	WorstCaseCost int64 `json:"worst_case_cost"`
	Ceiling       int64 `json:"ceiling"`
	Ticks         int64 `json:"ticks"`
}

// CheckLevel runs every check publishing runs on d, and stores nothing:
// the document's own checks and the reference design's decoding first
// (every problem of both in one EINVALID error), then one job on the
// dry-run workers, paid from who's budget for both runs, within the
// simulation timeout and ctx, that runs the starting design (it must fail),
// the reference design and the lesson search. A failing reference design and
// a lesson that can be skipped are reported in the LevelCheck (its verdict,
// its Warnings), not as errors: they say what to fix.
func (s *Service) CheckLevel(ctx context.Context, who string, d LevelDraft) (*challenges.Level, *LevelCheck, error) {
	l, err := challenges.Decode(d.Document)
	ps, invalid := challenges.AsProblems(err)
	if err != nil && !invalid {
		return nil, nil, err
	}
	fields := problemFields(d.Field, ps)
	var ref sim.Design
	hasRef := len(d.Reference) > 0 && string(d.Reference) != "null"
	if hasRef {
		ref, err = challenges.ParseDesign(d.Reference)
		if rps, ok := challenges.AsProblems(err); ok {
			fields = append(fields, problemFields(ReferenceField, rps)...)
		} else if err != nil {
			return nil, nil, err
		}
	}
	if len(fields) > 0 {
		return nil, nil, game.Invalid("the level is invalid", fields)
	}

	check := &LevelCheck{Slug: l.Slug, Cost: CostCheck{
		WorstCaseCost: l.WorstCaseCost(), Ceiling: challenges.MaxLevelRunCost, Ticks: l.Ticks()}}
	if hasRef {
		check.Reference = &DesignCheck{}
	}
	// The lesson search (challenges.CheckLesson) starts from the reference
	// design, as the campaign's test does, or without one from the starting
	// design: a design within a few single changes of it that leaves a
	// declared mechanic out and passes is a lesson that can be skipped. It is
	// paid for with the runs, within its own bound (challenges.LessonCost,
	// at most challenges.MaxLessonCost path-ticks), and yields to
	// submissions between its runs, as a hint does.
	lessonFrom, lessonField := l.StartingDesign, "starting_design"
	if hasRef {
		lessonFrom, lessonField = ref, ReferenceField
	}
	var lessonCost int64
	lessonOutOfTime := false
	// Compiling a design tells its problems with the level's rules and its
	// run's cost; both designs' problems are reported at once.
	costOf := func() (int64, error) {
		var fields []game.FieldError
		cost := func(d sim.Design, field string) int64 {
			c, err := l.RunCost(d)
			if ps, ok := challenges.AsProblems(err); ok {
				fields = append(fields, problemFields(field, ps)...)
			} else if err != nil {
				fields = append(fields, game.FieldError{Field: field, Reason: "cannot be compiled: " + err.Error()})
			}
			return c
		}
		check.Start.RunCost = cost(l.StartingDesign, join(d.Field, "starting_design"))
		if hasRef {
			check.Reference.RunCost = cost(ref, ReferenceField)
		}
		if err := game.Invalid("the level is invalid", fields); err != nil {
			return 0, err
		}
		if l.Lesson != nil {
			c, err := l.LessonCost(lessonFrom)
			if err != nil {
				return 0, err
			}
			lessonCost = c
		}
		return check.Start.RunCost + check.runCostOfReference() + lessonCost, nil
	}
	runCtx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	err = s.sched.Run(runCtx, who, scheduler.KindLevel, costOf, func(ctx context.Context) error {
		ev, err := l.StartVerdict(ctx)
		if err != nil {
			return err
		}
		check.Start.Evaluation = ev
		if hasRef {
			if check.Reference.Evaluation, err = l.Verdict(ctx, ref); err != nil {
				return err
			}
		}
		if l.Lesson != nil {
			// The search is advice: it stops a fifth of the run's time
			// before the run's deadline, so that a slow machine reports
			// it unfinished instead of failing the upload.
			lessonCtx := ctx
			if deadline, ok := ctx.Deadline(); ok {
				var cancel context.CancelFunc
				lessonCtx, cancel = context.WithDeadline(ctx, deadline.Add(-s.cfg.SimTimeout/5))
				defer cancel()
			}
			found, err := l.CheckLesson(lessonCtx, lessonFrom, challenges.LessonLimits{MaxCost: lessonCost, Yield: s.sched.YieldToSubmissions})
			if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				lessonOutOfTime = true
				return nil
			}
			if err != nil {
				return err
			}
			check.Lesson = &LessonCheck{From: lessonField, LessonCheck: found}
		}
		return nil
	})
	if ps, ok := challenges.AsProblems(err); ok {
		return nil, nil, ProblemsError("the level is invalid", d.Field, ps)
	}
	if err != nil {
		return nil, nil, err
	}
	check.Start.describe()
	check.Warnings = check.lessonWarnings(l, d.Field)
	if lessonOutOfTime {
		check.Warnings = append(check.Warnings, game.FieldError{Field: join(d.Field, "lesson"),
			Reason: fmt.Sprintf("not proven: the lesson search ran out of time (%s a check) before it finished", s.cfg.SimTimeout)})
	}
	check.Ready = true
	if check.Reference != nil {
		check.Reference.describe()
		check.Ready = check.Reference.Passed
	}
	return l, check, nil
}

// lessonWarnings says, at each declared mechanic's field, what the lesson
// search found against it: a design without it that passes, a reference
// that does not use it, a search its bound stopped.
func (c *LevelCheck) lessonWarnings(l *challenges.Level, prefix string) []game.FieldError {
	out := []game.FieldError{}
	if c.Lesson == nil {
		return out
	}
	field := func(mechanic string) string {
		for i, m := range l.Lesson.Mechanics {
			if m == mechanic {
				return join(prefix, fmt.Sprintf("lesson.mechanics[%d]", i))
			}
		}
		return join(prefix, "lesson.mechanics")
	}
	from := strings.ReplaceAll(c.Lesson.From, "_", " ")
	for _, m := range c.Lesson.Unused {
		if c.Lesson.From != ReferenceField {
			break // a starting design rarely uses what the level teaches
		}
		out = append(out, game.FieldError{Field: field(m), Reason: fmt.Sprintf(
			"the reference design does not use %s (%s), which the lesson says every passing design needs", m, challenges.MechanicWords(m))})
	}
	for i, sk := range c.Lesson.Skips {
		switch {
		case sk.Passed:
			out = append(out, game.FieldError{Field: field(sk.Mechanic), Reason: fmt.Sprintf(
				"the lesson can be skipped: a design without %s passes, found from the %s in %d runs (lesson.skips[%d].design)",
				challenges.MechanicWords(sk.Mechanic), from, sk.Tried, i)})
		case !sk.Complete:
			out = append(out, game.FieldError{Field: field(sk.Mechanic), Reason: fmt.Sprintf(
				"not proven: the lesson search stopped at its bound of %d units of simulation after %d runs, before it finished with %s",
				c.Lesson.MaxCost, sk.Tried, sk.Mechanic)})
		}
	}
	return out
}

// runCostOfReference is the reference design's run cost, 0 without one.
func (c *LevelCheck) runCostOfReference() int64 {
	if c.Reference == nil {
		return 0
	}
	return c.Reference.RunCost
}

// describe sums up the design's verdict: the failed conditions with what was
// measured against what was allowed and the engine's structural failures,
// or the passing design's smallest margin relative to its target.
func (c *DesignCheck) describe() {
	ev := c.Evaluation
	c.Passed = ev.Passed
	if ev.Passed {
		var tightest *challenges.Condition
		for i, cond := range ev.Conditions {
			if cond.Target != 0 && (tightest == nil || cond.Margin/cond.Target < tightest.Margin/tightest.Target) {
				tightest = &ev.Conditions[i]
			}
		}
		c.Summary = "passes every condition"
		if tightest != nil {
			c.Summary += fmt.Sprintf("; the tightest is %s, %s under its target of %s",
				tightest.Name, amount(tightest.Margin, tightest.Unit), amount(tightest.Target, tightest.Unit))
		}
		return
	}
	var failed []string
	for _, cond := range ev.Conditions {
		if !cond.Passed {
			failed = append(failed, fmt.Sprintf("%s (%s against %s)", cond.Name, amount(cond.Measured, cond.Unit), amount(cond.Target, cond.Unit)))
		}
	}
	if len(ev.Failures) > 0 {
		failed = append(failed, "structural failures: "+strings.Join(ev.Failures, ", "))
	}
	c.Summary = "fails " + strings.Join(failed, "; ")
}

// amount writes a value in its condition's unit as players read it: shares
// (an error rate, the use of the chaos allowance) as percentages, money in
// dollars.
func amount(v float64, unit string) string {
	switch unit {
	case "ratio", "usage":
		return fmt.Sprintf("%.3g%%", v*100)
	case "$/h":
		return fmt.Sprintf("$%.3g/h", v)
	}
	return strings.TrimSpace(fmt.Sprintf("%.4g %s", v, unit))
}

// join appends a JSON path to a prefix.
func join(prefix, path string) string {
	if prefix == "" {
		return path
	}
	return prefix + "." + path
}
