package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"backpressure/internal/challenges"
	"backpressure/internal/sim"
)

// cmdLevel prints a level's briefing as text, or the level document with --json.
func cmdLevel(ctx context.Context, o options, ref string) error {
	l, err := loadLevel(ctx, ref)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, l)
	}
	printLevel(o.stdout, l)
	return nil
}

// cmdInit writes a level's starting design to a file for the player to edit and run.
// An existing file is never overwritten: it may hold the player's own work.
func cmdInit(ctx context.Context, o options, ref, path string) error {
	l, err := loadLevel(ctx, ref)
	if err != nil {
		return err
	}
	if path == "" {
		path = l.Slug + ".design.json"
	}
	var b strings.Builder
	if err := writeJSON(&b, l.StartingDesign); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return invalidf("init: %s exists; name another file (backpressure init %s FILE) or remove it", path, ref)
	}
	if err != nil {
		return invalidf("init: %s", errText(err))
	}
	if _, err := io.WriteString(f, b.String()); err != nil {
		f.Close()
		return fmt.Errorf("init: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("init: writing %s: %w", path, err)
	}
	if o.json {
		return writeJSON(o.stdout, struct {
			File  string `json:"file"`
			Level string `json:"level"`
		}{path, l.Slug})
	}
	levelArg := ref
	nc, ne := len(l.StartingDesign.Components), len(l.StartingDesign.Edges)
	fmt.Fprintf(o.stdout, "wrote %s: the starting design of %s (%d component%s, %d connection%s).\n",
		path, l.Title, nc, plural(nc), ne, plural(ne))
	fmt.Fprintf(o.stdout, "It fails on purpose. Read the briefing, edit the file, then run it:\n\n")
	fmt.Fprintf(o.stdout, "  backpressure level %s\n  backpressure run --level %s --design %s\n  backpressure hint --level %s --design %s\n",
		levelArg, levelArg, path, levelArg, path)
	return nil
}

// printLevel writes what a player needs before building: the briefing, the targets, how the
// clients retry, the traffic and chaos, and the catalog with every price and limit.
func printLevel(w io.Writer, l *challenges.Level) {
	fmt.Fprintf(w, "%s v%d · %s (%s)\n\n", l.Slug, l.Version, l.Title, l.Difficulty)
	fmt.Fprintln(w, strings.TrimSpace(plainMarkdown(l.Briefing)))
	fmt.Fprintln(w)
	if ls := l.Lesson; ls != nil {
		words := make([]string, len(ls.Mechanics))
		for i, m := range ls.Mechanics {
			words[i] = challenges.MechanicWords(m)
		}
		fmt.Fprintf(w, "Lesson: %s\n  A passing design cannot leave out %s.\n\n", ls.Teaches, strings.Join(words, ", nor "))
	}

	fmt.Fprintln(w, "Targets (over the last 80% of the run):")
	fmt.Fprintf(w, "  p99 latency  ≤ %s ms\n", num(l.SLA.P99LatencyMs))
	fmt.Fprintf(w, "  error rate   ≤ %s\n", pct2(l.SLA.ErrorRate))
	fmt.Fprintf(w, "  cost         ≤ $%.3f/h\n", l.BudgetPerHour)
	fmt.Fprintf(w, "  stars        %s\n", parText(l))
	if r := l.Resilience; r != nil && len(l.Run.Chaos) > 0 {
		fmt.Fprintf(w, "  during chaos errors ≤ %s while each event acts, back to normal ≤ %g s after it\n", pct2(r.ErrorCeiling), r.RecoveryDeadlineSec)
	} else {
		fmt.Fprintln(w, "  during chaos no chaos in this level")
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "Clients: %s\n", clientText(l.Run.Client))
	fmt.Fprintf(w, "Traffic: %s over %g s (mix: %s)\n", trafficText(l.Run.Traffic), l.Run.DurationSec, mixText(l.Run.Mix))
	if len(l.Run.Chaos) > 0 {
		fmt.Fprintln(w, "Chaos:")
		for _, e := range l.Run.Chaos {
			fmt.Fprintf(w, "  %s\n", chaosText(e))
		}
	}
	fmt.Fprintln(w)

	prices := l.Catalog.PriceList()
	fmt.Fprintln(w, "Catalog:")
	kinds := make([]sim.Kind, 0, len(l.Catalog.Components))
	for k := range l.Catalog.Components {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b sim.Kind) int { return slices.Index(sim.Kinds(), a) - slices.Index(sim.Kinds(), b) })
	for _, k := range kinds {
		rules := l.Catalog.Components[k]
		fmt.Fprintf(w, "  %s (up to %d)\n", k, rules.MaxCount)
		types := rules.InstanceTypes
		if len(types) == 0 {
			for name, it := range prices {
				if it.Kind == k {
					types = append(types, name)
				}
			}
			sort.Strings(types)
		}
		for _, name := range types {
			fmt.Fprintf(w, "    %-18s %s\n", name, priceText(k, prices[name]))
		}
		if workers := workersText(k, rules); workers != "" {
			fmt.Fprintf(w, "    each unit: %s\n", workers)
		}
		for _, name := range sortedKeys(rules.Limits) {
			r := rules.Limits[name]
			fmt.Fprintf(w, "    limit %s: %s\n", name, rangeText(r))
		}
		for _, name := range sortedKeys(rules.Fixed) {
			fmt.Fprintf(w, "    fixed %s = %s\n", name, string(rules.Fixed[name]))
		}
	}
	fmt.Fprintln(w)
	if len(l.History) > 0 {
		fmt.Fprintln(w, "History:")
		for _, r := range l.History {
			fmt.Fprintf(w, "  v%-3d %s\n", r.Version, r.Change)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Start from its starting design: backpressure init %s (writes %s.design.json)\n", l.Slug, l.Slug)
}

func clientText(c sim.Client) string {
	var b strings.Builder
	if c.TimeoutMs > 0 {
		fmt.Fprintf(&b, "give up after %s ms", grouped(c.TimeoutMs))
	} else {
		b.WriteString("wait as long as it takes")
	}
	switch {
	case c.MaxRetries == 0:
		b.WriteString(", never retry")
	default:
		fmt.Fprintf(&b, ", retry up to %d time%s", c.MaxRetries, plural(c.MaxRetries))
		if c.BackoffMs > 0 {
			fmt.Fprintf(&b, ", first after %s ms", num(c.BackoffMs))
			if c.BackoffMultiplier > 1 {
				fmt.Fprintf(&b, ", each later one ×%g", c.BackoffMultiplier)
			}
		} else {
			b.WriteString(" at once (no backoff)")
		}
		if c.RetryBudget > 0 {
			fmt.Fprintf(&b, ", retries capped at %s of fresh requests", pct(c.RetryBudget))
		} else {
			b.WriteString(", no retry budget")
		}
	}
	return b.String()
}

func trafficText(t sim.Traffic) string {
	var s string
	switch t.Kind {
	case "ramp":
		s = fmt.Sprintf("%s rps, ramping to %s rps from %g s to %g s", grouped(t.RPS), grouped(t.ToRPS), t.StartSec, t.EndSec)
	case "step":
		parts := []string{grouped(t.RPS) + " rps"}
		for _, st := range t.Steps {
			parts = append(parts, fmt.Sprintf("%s rps at %g s", grouped(st.RPS), st.AtSec))
		}
		s = "steps: " + strings.Join(parts, ", ")
	case "wave":
		s = fmt.Sprintf("%s ± %s rps, a wave every %g s", grouped(t.RPS), grouped(t.AmplitudeRPS), t.PeriodSec)
	default:
		s = fmt.Sprintf("a steady %s rps", grouped(t.RPS))
	}
	for _, sp := range t.Spikes {
		s += fmt.Sprintf("; +%s rps for %g s at %g s", grouped(sp.RPS), sp.DurationSec, sp.AtSec)
	}
	return s
}

func mixText(m sim.Mix) string {
	var parts []string
	for _, p := range []struct {
		name  string
		share float64
	}{{"static", m.Static}, {"reads", m.Read}, {"writes", m.Write}, {"async writes", m.AsyncWrite}} {
		if p.share > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", pct(p.share), p.name))
		}
	}
	return strings.Join(parts, ", ")
}

func chaosText(e sim.ChaosEvent) string {
	when := fmt.Sprintf("%g s", e.AtSec)
	if e.DurationSec > 0 {
		when = fmt.Sprintf("%g–%g s", e.AtSec, e.AtSec+e.DurationSec)
	}
	var what string
	switch e.Kind {
	case "node_failure":
		what = e.Target + " fails"
	case "traffic_spike":
		what = fmt.Sprintf("traffic ×%g", e.Params.Multiplier)
	case "cache_flush":
		what = e.Target + " is flushed"
	case "network_partition":
		what = fmt.Sprintf("%s → %s cut off", e.From, e.To)
	case "latency_injection":
		what = fmt.Sprintf("%s → %s +%s ms", e.From, e.To, num(e.Params.ExtraLatencyMs))
	default:
		what = string(e.Kind)
	}
	id := e.ID
	if id == "" {
		id = fmt.Sprintf("%s@%gs", e.Kind, e.AtSec)
	}
	return fmt.Sprintf("%-10s %s (%s)", when, what, id)
}

// priceText is an instance type's charges and what one unit buys.
func priceText(k sim.Kind, it sim.InstanceType) string {
	unit := map[sim.Kind]string{
		sim.KindAppService: "replica", sim.KindContainerPool: "replica", sim.KindDatabase: "node",
		sim.KindCache: "node", sim.KindLoadBalancer: "instance", sim.KindAPIGateway: "instance",
		sim.KindQueue: "broker", sim.KindCDN: "edge",
	}[k]
	var parts []string
	if it.PricePerHour > 0 {
		parts = append(parts, fmt.Sprintf("$%.3f/h per %s", it.PricePerHour, unit))
	}
	if it.PricePerWorkerHour > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f/h per consumer", it.PricePerWorkerHour))
	}
	if it.PricePerMillion > 0 {
		parts = append(parts, fmt.Sprintf("$%g per million requests", it.PricePerMillion))
	}
	if it.PricePerGBSecond > 0 {
		parts = append(parts, fmt.Sprintf("$%g per GB-second", it.PricePerGBSecond))
	}
	s := strings.Join(parts, " + ")
	var buys []string
	if it.Speed > 0 && it.Speed != 1 {
		buys = append(buys, fmt.Sprintf("%g× speed", it.Speed))
	}
	if it.MemoryGB > 0 {
		buys = append(buys, fmt.Sprintf("%g GB", it.MemoryGB))
	}
	if it.CapacityRPS > 0 {
		buys = append(buys, fmt.Sprintf("%s rps per unit", grouped(it.CapacityRPS)))
	}
	if len(buys) > 0 {
		s += " · " + strings.Join(buys, ", ")
	}
	return s
}

// workersText says how many workers one unit of a pooled kind has: the level's fixed value
// of the parameter, else the engine's default.
func workersText(k sim.Kind, rules challenges.KindRules) string {
	var param, words string
	switch k {
	case sim.KindAppService, sim.KindContainerPool:
		param, words = "concurrency", "workers per replica"
	case sim.KindDatabase:
		param, words = "connections", "connections per node"
	default:
		return ""
	}
	v := ""
	if raw, ok := rules.Fixed[param]; ok {
		v = string(raw)
	} else {
		for _, spec := range sim.Params(k) {
			if spec.Name == param {
				v = fmt.Sprint(spec.Default)
			}
		}
	}
	return v + " " + words
}

func rangeText(r challenges.Range) string {
	switch {
	case r.Min != nil && r.Max != nil:
		return fmt.Sprintf("%g to %g", *r.Min, *r.Max)
	case r.Max != nil:
		return fmt.Sprintf("at most %g", *r.Max)
	case r.Min != nil:
		return fmt.Sprintf("at least %g", *r.Min)
	}
	return "the engine's range"
}

// plainMarkdown drops the heading marks and emphasis of a briefing for a terminal.
func plainMarkdown(md string) string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimLeft(line, "#")
		if len(line) < len(strings.TrimLeft(line, " ")) || strings.HasPrefix(line, " ") {
			line = strings.TrimSpace(line)
		}
		line = strings.NewReplacer("**", "", "__", "", "`", "").Replace(line)
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// grouped writes a whole number with thousands separators: 1,000,000.
func grouped(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
