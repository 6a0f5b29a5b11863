package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"backpressure/internal/challenges"
	"backpressure/internal/sim"
)

func printEvaluation(w io.Writer, l *challenges.Level, ev *challenges.Evaluation, width int) {
	fmt.Fprintf(w, "%s v%d · %s (%s)\n", l.Slug, l.Version, l.Title, l.Difficulty)
	fmt.Fprintf(w, "evaluated over %g–%g s (%d ticks); the first %.0f%% of the run is warm-up\n\n",
		round1(ev.Window.StartSec), round1(ev.Window.EndSec), ev.Window.Ticks, challenges.WarmupShare*100)
	printConditions(w, ev)
	fmt.Fprintln(w)
	if ev.Passed {
		fmt.Fprintf(w, "PASS · score %d of %d · %s\n", *ev.Score, challenges.MaxScore, starsText(l, ev.Stars))
		printScoreParts(w, ev)
	} else {
		fmt.Fprintf(w, "FAIL · %s\n", strings.Join(ev.Failing(), ", "))
	}
	printWhy(w, ev)
	for _, p := range ev.Warnings {
		fmt.Fprintf(w, "warning: %s: %s\n", p.Path, p.Reason)
	}
	var peaks []string
	for _, c := range ev.Components {
		mark := ""
		if !c.Healthy {
			mark = " !"
		}
		if c.Measure == "mean" {
			mark = " (mean)" + mark
		}
		peaks = append(peaks, fmt.Sprintf("%s %s%s", c.ID, pct(c.PeakUtilization), mark))
	}
	healthy := "yes"
	if !ev.Healthy {
		healthy = fmt.Sprintf("no (! at or above %.0f%%)", challenges.HealthyUtilization*100)
	}
	fmt.Fprintf(w, "peak utilisation outside chaos: %s · healthy: %s\n", strings.Join(peaks, ", "), healthy)
	if ev.Result != nil {
		fmt.Fprintln(w)
		printChart(w, l, ev, width)
	}
}

// printWhy writes the "why it happened" timeline: one line per stretch with its cause and
// what the engine measured, and the advice under it.
func printWhy(w io.Writer, ev *challenges.Evaluation) {
	switch {
	case len(ev.Why) == 0 && ev.Passed:
		fmt.Fprintf(w, "why it happened: nothing failed (busiest: %s)\n", ev.Busiest)
		return
	case len(ev.Why) == 0:
		fmt.Fprintf(w, "why it happened: no stretch in which more than 5%% of attempts failed (busiest: %s)\n", ev.Busiest)
		return
	}
	fmt.Fprintln(w, "why it happened:")
	for _, y := range ev.Why {
		when := fmt.Sprintf("%g–%g s", round1(y.StartSec), round1(y.EndSec))
		fmt.Fprintf(w, "  %s  %s %s: %s\n", when, y.Component, strings.ReplaceAll(string(y.Cause), "_", " "), y.Detail)
		fmt.Fprintf(w, "  %s  → %s\n", strings.Repeat(" ", utf8.RuneCountInString(when)), y.Advice)
	}
}

func printConditions(w io.Writer, ev *challenges.Evaluation) {
	for _, c := range ev.Conditions {
		var got, target, margin string
		switch c.Name {
		case challenges.CondLatency:
			if c.Unmeasured {
				fmt.Fprintf(w, "  %s %-11s %-18s %-18s %s\n", tick(c.Passed), c.Name, "no answers", fmt.Sprintf("≤ %s ms", num(c.Target)), "nothing to measure")
				continue
			}
			got, target = fmt.Sprintf("p99 %s ms", num(c.Measured)), fmt.Sprintf("≤ %s ms", num(c.Target))
			margin = signed(c.Margin, num) + " ms"
		case challenges.CondErrors:
			got, target = pct2(c.Measured), "≤ "+pct2(c.Target)
			margin = signed(c.Margin*100, func(x float64) string { return fmt.Sprintf("%.2f", x) }) + " pts"
		case challenges.CondCost:
			got, target = fmt.Sprintf("$%.3f/h", c.Measured), fmt.Sprintf("≤ $%.3f/h", c.Target)
			margin = signed(c.Margin, func(x float64) string { return fmt.Sprintf("$%.3f", x) }) + "/h"
		case challenges.CondResilience:
			if len(ev.Events) == 0 {
				fmt.Fprintf(w, "  %s %-11s %s\n", tick(c.Passed), c.Name, "no chaos in this level")
				continue
			}
			got, target = fmt.Sprintf("usage %.2f", c.Measured), "≤ 1.00"
			margin = signed(c.Margin, func(x float64) string { return fmt.Sprintf("%.2f", x) })
		}
		fmt.Fprintf(w, "  %s %-11s %-18s %-18s margin %s\n", tick(c.Passed), c.Name, got, target, margin)
	}
	for _, e := range ev.Events {
		rec := "never recovered"
		if e.RecoverySec != nil {
			rec = fmt.Sprintf("recovered in %g s", round1(*e.RecoverySec))
		}
		fmt.Fprintf(w, "      %-26s errors %s (ceiling %s) %s · %s (deadline %g s) %s\n", e.ID,
			pct2(e.ErrorRate), pct2(e.ErrorCeiling), tick(e.CeilingHeld), rec, e.RecoveryDeadlineSec, tick(e.Recovered))
	}
	if len(ev.Failures) > 0 {
		fmt.Fprintf(w, "  ✗ %-11s %s\n", "structure", strings.Join(ev.Failures, ", "))
	}
}

func printHint(w io.Writer, l *challenges.Level, h *challenges.Hint, width int) {
	fmt.Fprintf(w, "%s v%d · %s — hint\n\n", l.Slug, l.Version, l.Title)
	fmt.Fprintln(w, "Your design:")
	printConditions(w, h.Before)
	fmt.Fprintln(w)
	switch {
	case h.Before.Passed:
		fmt.Fprintln(w, h.Message)
		return
	case !h.Found:
		fmt.Fprintln(w, h.Message)
		fmt.Fprintf(w, "(%d single changes simulated)\n", h.Tried)
		return
	}
	fmt.Fprintf(w, "Fix: %s\n", h.Change.Description)
	fmt.Fprintln(w, "Patch (JSON Patch, RFC 6902), applied to your design and re-run:")
	for _, op := range h.Change.Patch {
		fmt.Fprintf(w, "  %s %s %s\n", op.Op, op.Path, string(op.Value))
	}
	fmt.Fprintf(w, "(%d single changes simulated)\n\n", h.Tried)
	fmt.Fprintln(w, "After the change:")
	printConditions(w, h.After)
	if h.After.Score != nil {
		fmt.Fprintf(w, "\nPASS · score %d of %d\n\n", *h.After.Score, challenges.MaxScore)
	}
	printChart(w, l, h.After, width)
}

// printChart draws the run as sparklines: one column per slice of time, the worst tick of
// each slice (max), so that a short outage is never averaged away.
func printChart(w io.Writer, l *challenges.Level, ev *challenges.Evaluation, width int) {
	res := ev.Result
	if res == nil || len(res.Ticks) == 0 {
		return
	}
	ticks := res.Ticks
	cols := min(width, len(ticks))
	bucket := func(f func(t *sim.Tick) float64) []float64 {
		out := make([]float64, cols)
		for j := range cols {
			a, b := j*len(ticks)/cols, (j+1)*len(ticks)/cols
			m := 0.0
			for k := a; k < b; k++ {
				m = math.Max(m, f(&ticks[k]))
			}
			out[j] = m
		}
		return out
	}
	dur := ticks[len(ticks)-1].T
	fmt.Fprintf(w, "timeline 0–%g s, %g s per column, worst tick of each (^ ends the warm-up; utilisation rows are 0–100%%)\n", round1(dur), round1(dur/float64(cols)))
	row := func(label string, vals []float64, scale float64, note string) {
		fmt.Fprintf(w, "  %-12s %s  %s\n", truncate(label, 12), sparkline(vals, scale), note)
	}
	p99 := bucket(func(t *sim.Tick) float64 { return t.P99Ms })
	row("p99 ms", p99, math.Max(maxOf(p99), l.SLA.P99LatencyMs), fmt.Sprintf("max %s, target %s", num(maxOf(p99)), num(l.SLA.P99LatencyMs)))
	errs := bucket(func(t *sim.Tick) float64 { return t.ErrorRate })
	row("errors", errs, math.Max(maxOf(errs), l.SLA.ErrorRate), fmt.Sprintf("max %s, target %s", pct2(maxOf(errs)), pct2(l.SLA.ErrorRate)))
	for i, c := range res.Components {
		u := bucket(func(t *sim.Tick) float64 { return t.Components[i].Utilization })
		row(c.ID, u, 1, "max "+pct(math.Min(maxOf(u), 1000)))
	}
	if len(l.Run.Chaos) > 0 {
		marks := make([]byte, cols)
		for j := range cols {
			marks[j] = ' '
			a, b := j*len(ticks)/cols, (j+1)*len(ticks)/cols
			for k := a; k < b; k++ {
				if len(ticks[k].Events) > 0 {
					marks[j] = '#'
				}
			}
		}
		var names []string
		for _, e := range ev.Events {
			names = append(names, e.ID)
		}
		fmt.Fprintf(w, "  %-12s %s  %s\n", "chaos", string(marks), strings.Join(names, ", "))
	}
	axis := []byte(strings.Repeat(" ", cols))
	warm := int(math.Floor(float64(cols) * challenges.WarmupShare))
	if warm < cols {
		axis[warm] = '^'
	}
	fmt.Fprintf(w, "  %-12s %s\n", "", string(axis))
}

var blocks = []rune("▁▂▃▄▅▆▇█")

func sparkline(vals []float64, scale float64) string {
	var b strings.Builder
	for _, v := range vals {
		if v <= 0 || scale <= 0 {
			b.WriteRune(' ')
			continue
		}
		i := int(math.Ceil(v/scale*float64(len(blocks)))) - 1
		b.WriteRune(blocks[min(max(i, 0), len(blocks)-1)])
	}
	return b.String()
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func tick(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func pct(x float64) string  { return fmt.Sprintf("%.0f%%", x*100) }
func pct2(x float64) string { return fmt.Sprintf("%.2f%%", x*100) }

func num(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.3g", x)
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func signed(x float64, f func(float64) string) string {
	if x >= 0 {
		return "+" + f(x)
	}
	return "−" + f(-x)
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// starsText writes a run's stars and what the next one needs.
func starsText(l *challenges.Level, stars int) string {
	text := strings.Repeat("★", stars) + strings.Repeat("☆", challenges.MaxStars-stars)
	switch st := l.Stars; {
	case st == nil:
	case stars == 1:
		text += fmt.Sprintf(" (two at %d)", st.Two)
	case stars == 2:
		text += fmt.Sprintf(" (three at %d)", st.Three)
	}
	return text
}

// printScoreParts writes what a passing run's score is made of: the base and each
// condition's share of its allowance left unused, times its weight.
func printScoreParts(w io.Writer, ev *challenges.Evaluation) {
	parts := make([]string, 0, len(ev.ScoreParts))
	for _, p := range ev.ScoreParts {
		parts = append(parts, fmt.Sprintf("%s %s (%.0f%% left × %.2f)", p.Condition, num(p.Points), p.Headroom*100, p.Weight))
	}
	fmt.Fprintf(w, "  score = %d + %s\n", challenges.ScoreBase, strings.Join(parts, " + "))
}

// parText writes a level's par: the scores of its second and third stars.
func parText(l *challenges.Level) string {
	if l.Stars == nil {
		return "★ for passing"
	}
	return fmt.Sprintf("★ for passing, ★★ at %d, ★★★ at %d", l.Stars.Two, l.Stars.Three)
}
