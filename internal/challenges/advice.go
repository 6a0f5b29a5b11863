package challenges

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"backpressure/internal/sim"
)

// Advice that fits the level. The engine's "why it happened" says what would address each
// failing stretch in general ("add replicas to app"); a level may forbid that (replicas at
// their limit, a budget that cannot pay for one more, a fixed scale-out delay). advise
// replaces each stretch's advice with changes the level allows: drawn from the same single
// changes the fix hint searches (the catalog's knobs within their limits, instance types
// on offer, components the catalog still permits), kept when they move in the direction
// that addresses the cause, and dropped when the fixed hourly price of the design they make
// (its replicas, nodes and workers, before any request) is over the budget. Where none is
// left it says so and points at the hint.

// maxAdvised is how many changes one stretch's advice names.
const maxAdvised = 3

// noSingleChange is the advice where the level allows no single change that addresses the
// cause: the hint searches every change the level allows and, when none passes, names what
// binds.
const noSingleChange = "no single change this level allows addresses this here (its limits, fixed parameters or budget rule out the usual fixes); ask for the hint, which tries every change the level allows and names what binds"

// advise rewrites ev's why-it-happened advice for design d (as the player wrote it).
func (l *Level) advise(d sim.Design, ev *Evaluation) {
	if l.c == nil || len(ev.Why) == 0 {
		return
	}
	cands := l.candidates(d, ev)
	for i := range ev.Why {
		ev.Why[i].Advice = l.adviceFor(d, ev, &ev.Why[i], cands)
	}
}

// adviceFor is the advice for one stretch.
func (l *Level) adviceFor(d sim.Design, ev *Evaluation, w *sim.Why, cands []candidate) string {
	prefix := ""
	if w.Cause == sim.CauseNoRoute {
		return l.noRouteAdvice(d, w.Component)
	}
	changes := l.suggestions(d, ev, w, cands)
	if len(changes) == 0 {
		if w.Cause == sim.CauseBreakerOpen {
			prefix = fmt.Sprintf("the breaker at %s only keeps what fails below it from making things worse; ", w.Component)
		}
		return prefix + noSingleChange
	}
	words := make([]string, len(changes))
	for i, c := range changes {
		words[i] = c.Description
	}
	return "try " + strings.Join(words, ", or ")
}

// suggestions are the changes that address stretch w: at most maxAdvised, the smallest of
// each kind of change, in the hint's order.
func (l *Level) suggestions(d sim.Design, ev *Evaluation, w *sim.Why, cands []candidate) []Change {
	byID := map[string]sim.Component{}
	for _, c := range d.Components {
		byID[c.ID] = c
	}
	target, ok := byID[w.Component]
	if !ok {
		return nil
	}
	relevant := l.relevance(d, byID, target, w)
	seen := map[string]bool{}
	var out []Change
	for _, cd := range cands {
		key, ok := relevant(cd)
		if !ok || seen[key] {
			continue
		}
		if l.fixedHourly(cd.design) > l.BudgetPerHour {
			continue // the level's budget cannot pay for it, whatever the traffic
		}
		if _, err := l.prepare(cd.design); err != nil {
			continue // a change the level refuses (min_replicas above max_replicas)
		}
		seen[key] = true
		out = append(out, cd.change)
		if len(out) == maxAdvised {
			break
		}
	}
	return out
}

// relevance returns a filter of candidates that address w's cause at target, and the key
// that keeps only the smallest change of each kind (the candidates come smallest first).
func (l *Level) relevance(d sim.Design, byID map[string]sim.Component, target sim.Component, w *sim.Why) func(candidate) (string, bool) {
	up := func(cd candidate) bool { return numberOf(cd.change.To) > numberOf(cd.change.From) }
	down := func(cd candidate) bool { return numberOf(cd.change.To) < numberOf(cd.change.From) }
	better := func(cd candidate) bool {
		return l.betterType(byID[cd.change.Component], jsonString(cd.change.From), jsonString(cd.change.To))
	}
	type rule struct {
		comps  []string // components the change may touch
		params map[string]func(candidate) bool
		adds   []sim.Kind // component kinds whose addition addresses the cause
		// at narrows a parameter to some components (else any of comps).
		at map[string][]string
	}
	var r rule
	onTarget := []string{target.ID}
	capacity := map[string]func(candidate) bool{
		"replicas": up, "instances": up, "workers": up, "max_concurrency": up, "read_replicas": up,
		"min_replicas": up, "max_replicas": up, "target_utilization": down,
		"instance_type": better, "replica_instance_type": better,
	}
	switch w.Cause {
	case sim.CauseSaturated:
		r = rule{comps: onTarget, params: capacity}
		if strings.Contains(w.Detail, "injected latency") {
			// A slow call keeps its workers full: a shorter waiting room fails fast
			// instead of holding requests past their deadline.
			r.params["queue_per_replica"] = down
		}
		if l.Run.Mix.Read > 0 && (target.Type == sim.KindDatabase || isCompute(target.Type)) {
			r.adds = append(r.adds, sim.KindCache)
		}
		if target.Type == sim.KindDatabase && l.Run.Mix.Read > 0 {
			// A cache with more memory holds more of the working set and answers more reads.
			for _, c := range d.Components {
				if c.Type == sim.KindCache {
					r.comps = append(r.comps, c.ID)
				}
			}
		}
		switch {
		case target.Type == sim.KindDatabase && l.Run.Mix.AsyncWrite > 0:
			r.adds = append(r.adds, sim.KindQueue) // writes behind a queue reach it at its workers' pace
		case isCompute(target.Type):
			// In front of it: a CDN answers static files, a gateway's rate limit sheds the
			// excess before it queues.
			if l.Run.Mix.Static > 0 {
				r.adds = append(r.adds, sim.KindCDN)
			}
			r.adds = append(r.adds, sim.KindAPIGateway)
			gws := callers(d, target.ID, sim.KindAPIGateway)
			r.comps = append(r.comps, gws...)
			r.params["rate_limit_rps"] = func(cd candidate) bool { return numberOf(cd.change.From) == 0 || down(cd) }
			r.at = map[string][]string{"rate_limit_rps": gws}
			for name := range r.params {
				if name != "rate_limit_rps" {
					r.at[name] = onTarget
				}
			}
		case target.Type == sim.KindQueue:
			r.comps = append(r.comps, callees(d, target.ID)...)
		}
	case sim.CauseNodeFailed:
		lbs := callers(d, target.ID, sim.KindLoadBalancer)
		siblings := []string{}
		for _, lb := range lbs {
			for _, s := range callees(d, lb) {
				if s != target.ID {
					siblings = append(siblings, s)
				}
			}
		}
		r = rule{comps: append(lbs, siblings...), params: map[string]func(candidate) bool{
			"health_checks":             func(cd candidate) bool { return string(cd.change.To) == "true" },
			"health_check_interval_sec": down, "unhealthy_threshold": down,
			"replicas": up, "instance_type": better,
		}}
		if len(lbs) > 0 {
			r.adds = []sim.Kind{sim.KindAppService, sim.KindContainerPool, sim.KindServerless}
		}
	case sim.CausePartition:
		if target.Type == sim.KindQueue {
			r = rule{comps: onTarget, params: map[string]func(candidate) bool{"buffer": up}}
		} else if len(callers(d, target.ID, sim.KindLoadBalancer)) > 0 {
			r.adds = []sim.Kind{sim.KindAppService, sim.KindContainerPool, sim.KindServerless}
		}
	case sim.CauseRateLimited:
		r = rule{comps: onTarget, params: map[string]func(candidate) bool{"rate_limit_rps": up}}
	case sim.CauseThrottled:
		r = rule{comps: onTarget, params: map[string]func(candidate) bool{"max_concurrency": up}}
	case sim.CauseTimeouts:
		r = rule{comps: append(onTarget, callers(d, target.ID, "")...), params: map[string]func(candidate) bool{
			"instance_type": better, "queue_per_replica": down}}
	case sim.CauseLostWrites:
		r = rule{comps: append(onTarget, callees(d, target.ID)...), params: map[string]func(candidate) bool{
			"workers": up, "instance_type": better}}
	case sim.CauseReplicationLag:
		r = rule{comps: onTarget, params: map[string]func(candidate) bool{
			"read_replicas": up, "replica_instance_type": better, "instance_type": better}}
		if l.Run.Mix.Read > 0 {
			r.adds = []sim.Kind{sim.KindCache}
		}
	}
	return func(cd candidate) (string, bool) {
		ch := cd.change
		if ch.Kind == ChangeAdd {
			k := addedKind(ch)
			return "add " + string(k), slices.Contains(r.adds, k)
		}
		f, ok := r.params[ch.Param]
		comps := r.comps
		if at, narrowed := r.at[ch.Param]; narrowed {
			comps = at
		}
		if !ok || !slices.Contains(comps, ch.Component) || !f(cd) {
			return "", false
		}
		return ch.Component + "." + ch.Param, true
	}
}

// noRouteAdvice says what a component with nowhere to send a request class needs, if the
// level allows it: an edge to a database or origin the design has, or one the catalog offers.
func (l *Level) noRouteAdvice(d sim.Design, id string) string {
	kinds := map[string]sim.Kind{}
	count := map[sim.Kind]int{}
	for _, c := range d.Components {
		count[c.Type]++
		kinds[c.ID] = c.Type
	}
	if kinds[id] == sim.KindCache {
		// A cache calls nothing (cache-aside): its misses are its caller's to send on.
		for _, e := range d.Edges {
			if e.To == id {
				id = e.From
				break
			}
		}
	}
	from := sim.Component{ID: id, Type: kinds[id]}
	wanted := []sim.Kind{sim.KindDatabase}
	what := "a database"
	switch {
	case from.Type == sim.KindCDN:
		wanted, what = []sim.Kind{sim.KindLoadBalancer, sim.KindAPIGateway, sim.KindAppService, sim.KindContainerPool, sim.KindServerless}, "an origin"
	case from.Type == sim.KindLoadBalancer || from.Type == sim.KindAPIGateway:
		wanted, what = []sim.Kind{sim.KindAppService, sim.KindContainerPool, sim.KindServerless}, "a service"
	}
	for _, c := range d.Components {
		if c.ID != id && slices.Contains(wanted, c.Type) && !slices.Contains(callees(d, id), c.ID) {
			return fmt.Sprintf("connect %s to %s (%s), so its requests have somewhere to go", id, c.ID, what)
		}
	}
	for _, k := range wanted {
		if ki := l.c.kinds[k]; ki != nil && count[k] < ki.maxCount {
			return fmt.Sprintf("add a %s from the catalog and connect %s to it, so its requests have somewhere to go", k, id)
		}
	}
	return noSingleChange
}

// betterType: instance type to is faster, larger or of more throughput than from.
func (l *Level) betterType(comp sim.Component, from, to string) bool {
	cat := l.c.cfg.Catalog
	if from == "" {
		from = defaultType(cat, comp.Type)
	}
	a, b := cat[from], cat[to]
	return b.Speed > a.Speed || b.CapacityRPS > a.CapacityRPS || b.MemoryGB > a.MemoryGB
}

// callees are the ids component id calls.
func callees(d sim.Design, id string) []string {
	var out []string
	for _, e := range d.Edges {
		if e.From == id {
			out = append(out, e.To)
		}
	}
	return out
}

// callers are the ids of the components of kind k ("" for any) that call id.
func callers(d sim.Design, id string, k sim.Kind) []string {
	kinds := map[string]sim.Kind{}
	for _, c := range d.Components {
		kinds[c.ID] = c.Type
	}
	var out []string
	for _, e := range d.Edges {
		if e.To == id && (k == "" || kinds[e.From] == k) {
			out = append(out, e.From)
		}
	}
	return out
}

// addedKind is the kind of the component an addition adds.
func addedKind(ch Change) sim.Kind {
	if len(ch.Patch) == 0 {
		return ""
	}
	var c sim.Component
	if json.Unmarshal(ch.Patch[0].Value, &c) != nil {
		return ""
	}
	return c.Type
}

func numberOf(raw json.RawMessage) float64 {
	var x float64
	if json.Unmarshal(raw, &x) != nil {
		return 0
	}
	return x
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// annotate adds to an evaluation of d what needs the design as the player wrote it: advice
// that fits the level, and warnings about parts of the design no request visits.
func (l *Level) annotate(d sim.Design, p *sim.Prepared, ev *Evaluation) {
	l.advise(d, ev)
	comps, edges := p.Idle()
	position := map[string]int{}
	for i, c := range d.Components {
		position[c.ID] = i
	}
	for _, id := range comps {
		if i, ok := position[id]; ok {
			ev.Warnings = append(ev.Warnings, Problem{Path: index("components", i),
				Reason: fmt.Sprintf("no request of this level ever reaches %s: it costs money and changes nothing", id)})
		}
	}
	for _, e := range edges {
		if e >= len(d.Edges) {
			continue
		}
		ed := d.Edges[e]
		reason := fmt.Sprintf("no request crosses %s → %s: a call to a component of a kind none of its requests go to changes nothing", ed.From, ed.To)
		if reaches(d, ed.To, ed.From) {
			reason = fmt.Sprintf("no request crosses %s → %s: it closes a cycle, and a request never visits a component twice, so it changes nothing", ed.From, ed.To)
		}
		ev.Warnings = append(ev.Warnings, Problem{Path: index("edges", e), Reason: reason})
	}
}

// reaches: a path of edges leads from a to b.
func reaches(d sim.Design, a, b string) bool {
	seen := map[string]bool{}
	stack := []string{a}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == b {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, callees(d, n)...)
	}
	return false
}
