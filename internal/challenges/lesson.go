package challenges

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"backpressure/internal/sim"
)

// Lessons that cannot be skipped. A level declares the mechanics it teaches; each mechanic
// is a rule about designs (uses it or leaves it out) and a way to take it out of a design.
// SkipLesson searches, with the fix hint's own single changes over the level's catalog and
// limits, for the best design that leaves a mechanic out: starting from the reference
// solution with the mechanic taken out, it takes the change that comes closest to passing,
// step by step, each change with the mechanic taken out again. A lesson holds when that
// search finds nothing that passes.

// Lesson is what a level teaches: the mechanics a passing design cannot leave out.
type Lesson struct {
	// Mechanics are names from Mechanics(); a passing design uses every one.
	Mechanics []string `json:"mechanics"`
	// Teaches says the lesson in one sentence, for the player.
	Teaches string `json:"teaches"`
}

// mechanic is one thing a level can teach.
type mechanic struct {
	words string
	// uses: the design uses the mechanic (start is the level's starting design).
	uses func(l *Level, start, d sim.Design) bool
	// strip takes it out of d.
	strip func(l *Level, start, d sim.Design) sim.Design
}

var mechanics = map[string]mechanic{
	"scale_out": {"more compute capacity than the starting design: replicas or faster instances",
		func(l *Level, start, d sim.Design) bool { return l.computeCapacity(d) > l.computeCapacity(start)+1e-9 },
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, isCompute, "replicas", "instance_type", "min_replicas", "max_replicas")
		}},
	"scale_up": {"a faster compute instance type than the starting design's",
		func(l *Level, start, d sim.Design) bool { return l.computeSpeed(d) > l.computeSpeed(start)+1e-9 },
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, isCompute, "instance_type")
		}},
	"cache": {"a cache beside the app (cache-aside)", has(sim.KindCache), without(sim.KindCache)},
	"cdn":   {"a CDN in front", has(sim.KindCDN), without(sim.KindCDN)},
	"queue": {"a queue for asynchronous writes", has(sim.KindQueue), without(sim.KindQueue)},
	"read_replicas": {"database read replicas",
		func(l *Level, _, d sim.Design) bool {
			return anyParam(d, sim.KindDatabase, "read_replicas", func(x any) bool { return x.(float64) > 0 })
		},
		func(l *Level, _, d sim.Design) sim.Design { return setAll(d, sim.KindDatabase, "read_replicas", 0.0) }},
	"faster_database": {"a faster database instance type",
		func(l *Level, start, d sim.Design) bool {
			return l.speedOf(d, sim.KindDatabase) > l.speedOf(start, sim.KindDatabase)+1e-9
		},
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, func(k sim.Kind) bool { return k == sim.KindDatabase }, "instance_type")
		}},
	"health_checks": {"a balancer's health checks",
		func(l *Level, _, d sim.Design) bool {
			return anyParam(d, sim.KindLoadBalancer, "health_checks", func(x any) bool { return x == true })
		},
		func(l *Level, _, d sim.Design) sim.Design {
			return setAll(d, sim.KindLoadBalancer, "health_checks", false)
		}},
	"fast_health_checks": {"health checks that notice a dead backend sooner than the starting design's (interval × threshold)",
		func(l *Level, start, d sim.Design) bool { return l.detection(d) < l.detection(start) },
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, func(k sim.Kind) bool { return k == sim.KindLoadBalancer },
				"health_check_interval_sec", "unhealthy_threshold")
		}},
	"queue_workers": larger("more queue workers than the starting design's", sim.KindQueue, "workers"),
	"early_scaling": {"an autoscaler that scales out sooner than the starting design's (a lower target utilisation)",
		func(l *Level, start, d sim.Design) bool {
			return l.smallestOf(d, sim.KindContainerPool, "target_utilization") < l.smallestOf(start, sim.KindContainerPool, "target_utilization")
		},
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, func(k sim.Kind) bool { return k == sim.KindContainerPool }, "target_utilization")
		}},
	"queue_buffer": larger("a queue buffer larger than the starting design's", sim.KindQueue, "buffer"),
	"bounded_queue": {"a shorter waiting room at a service than the starting design's",
		func(l *Level, start, d sim.Design) bool {
			return l.smallest(d, "queue_per_replica") < l.smallest(start, "queue_per_replica")
		},
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, isCompute, "queue_per_replica")
		}},
	"autoscaling": {"an autoscaler with room to add replicas (max_replicas above min_replicas)",
		func(l *Level, _, d sim.Design) bool {
			for _, c := range d.Components {
				if c.Type == sim.KindContainerPool && paramOf(c, "max_replicas").(float64) > paramOf(c, "min_replicas").(float64) {
					return true
				}
			}
			return false
		},
		func(l *Level, _, d sim.Design) sim.Design {
			out := cloneDesign(d)
			for i, c := range out.Components {
				if c.Type == sim.KindContainerPool {
					out.Components[i] = withParam(c, "max_replicas", paramOf(c, "min_replicas"))
				}
			}
			return out
		}},
	"capacity_balancing": {"a balancer that sees how busy each backend is (least-connections, not round robin)",
		func(l *Level, _, d sim.Design) bool {
			return anyParam(d, sim.KindLoadBalancer, "algorithm", func(x any) bool { return x != "round_robin" })
		},
		func(l *Level, _, d sim.Design) sim.Design {
			return setAll(d, sim.KindLoadBalancer, "algorithm", "round_robin")
		}},
	"function_memory": larger("more memory for a function than the starting design's (its CPU comes with it)", sim.KindServerless, "memory_mb"),
	"cache_memory": {"a cache with more memory than the starting design's",
		func(l *Level, start, d sim.Design) bool { return l.cacheMemory(d) > l.cacheMemory(start) },
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, func(k sim.Kind) bool { return k == sim.KindCache }, "instance_type")
		}},
	"rate_limit": {"a gateway's rate limit",
		func(l *Level, _, d sim.Design) bool {
			return anyParam(d, sim.KindAPIGateway, "rate_limit_rps", func(x any) bool { return x.(float64) > 0 })
		},
		func(l *Level, _, d sim.Design) sim.Design {
			return setAll(d, sim.KindAPIGateway, "rate_limit_rps", 0.0)
		}},
	"function_concurrency": larger("more function concurrency than the starting design's", sim.KindServerless, "max_concurrency"),
}

// Mechanics lists the mechanics a level may declare, in order.
func Mechanics() []string {
	names := make([]string, 0, len(mechanics))
	for n := range mechanics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (l *Level) validateLesson(ps *Problems) {
	if l.Lesson == nil {
		return
	}
	if len(l.Lesson.Mechanics) == 0 {
		ps.add("lesson.mechanics", "names at least one mechanic")
	}
	for i, m := range l.Lesson.Mechanics {
		if _, ok := mechanics[m]; !ok {
			ps.addf(index("lesson.mechanics", i), "%q is not a mechanic (known: %s)", m, quoteList(Mechanics()))
		}
	}
	switch n := utf8.RuneCountInString(strings.TrimSpace(l.Lesson.Teaches)); {
	case n == 0:
		ps.add("lesson.teaches", "is required: say the lesson in one sentence")
	case n > maxChangeLen:
		ps.addf("lesson.teaches", "is longer than %d characters", maxChangeLen)
	}
}

// LessonSkip is the best design the search found that leaves a mechanic out.
type LessonSkip struct {
	Mechanic string `json:"mechanic"`
	// Passed: the design passes, so the lesson can be skipped.
	Passed  bool        `json:"passed"`
	Design  sim.Design  `json:"design"`
	Verdict *Evaluation `json:"-"`
	Tried   int         `json:"tried"`
	// Complete: the search ran to its end; false when its cost bound stopped it first
	// (a lesson not proven either way).
	Complete bool `json:"complete"`
}

// lessonSteps bounds the search: this many single changes after taking the mechanic out.
const lessonSteps = 3

// MaxLessonCost bounds the simulation work of one level's lesson check, every mechanic's
// search together (LessonLimits.MaxCost): about two seconds of one core. An author's
// upload pays for it from the author's budget before it starts (CheckLesson's cost is
// known then: LessonCost); the campaign's own test searches without a bound.
const MaxLessonCost = 10_000_000

// maxLessonRuns is what a lesson check charges for, in runs of the design it starts from;
// the bound in path-ticks (at most MaxLessonCost) is what stops the search.
const maxLessonRuns = 200

// LessonCost is what CheckLesson from d may cost: MaxLessonCost, or less for a design
// cheap enough that maxLessonRuns of it cost less. Known before the check starts.
func (l *Level) LessonCost(d sim.Design) (int64, error) {
	c, err := l.RunCost(d)
	if err != nil {
		return 0, err
	}
	return min(MaxLessonCost, c*maxLessonRuns), nil
}

// LessonLimits bound a lesson check. Zero values take the defaults.
type LessonLimits struct {
	// MaxCost bounds the path-ticks of all the check's runs together; default and
	// ceiling MaxLessonCost. A run that would pass it is not started: the search ends
	// there, incomplete, so what it finds depends on the bound, never on the machine.
	MaxCost int64
	// Yield, if set, is called before each run and may block (a server gives its
	// submissions priority); it changes when the runs happen, never what they find.
	Yield func(ctx context.Context)
}

// LessonCheck is what the lesson search found for each mechanic the level declares,
// starting from one design.
type LessonCheck struct {
	Skips []LessonSkip `json:"skips"`
	// Unused names the declared mechanics the design searched from does not use (a
	// reference solution should use every one).
	Unused  []string `json:"unused"`
	Cost    int64    `json:"cost"`
	MaxCost int64    `json:"max_cost"`
}

// CheckLesson runs SkipLesson for each mechanic of the level's lesson from design from,
// within lim: the check an author's upload gets. A level without a lesson gives nil.
func (l *Level) CheckLesson(ctx context.Context, from sim.Design, lim LessonLimits) (*LessonCheck, error) {
	if l.Lesson == nil {
		return nil, nil
	}
	if lim.MaxCost <= 0 || lim.MaxCost > MaxLessonCost {
		lim.MaxCost = MaxLessonCost
	}
	b := &lessonBudget{max: lim.MaxCost, yield: lim.Yield}
	out := &LessonCheck{Skips: []LessonSkip{}, Unused: []string{}, MaxCost: lim.MaxCost}
	for _, name := range l.Lesson.Mechanics {
		if !mechanics[name].uses(l, l.StartingDesign, from) {
			out.Unused = append(out.Unused, name)
		}
		skip, err := l.skipLesson(ctx, name, from, b)
		if err != nil {
			return nil, err
		}
		out.Skips = append(out.Skips, *skip)
	}
	out.Cost = b.spent
	return out, nil
}

// lessonBudget is what a lesson check may still spend, shared by its searches.
type lessonBudget struct {
	spent, max int64
	yield      func(ctx context.Context)
}

// verdict runs d within the budget: ok is false, and nothing runs, when its cost would
// pass the bound. A design the level refuses is an error, as for Evaluate.
func (l *Level) lessonVerdict(ctx context.Context, d sim.Design, b *lessonBudget) (ev *Evaluation, ok bool, err error) {
	p, err := l.prepare(d)
	if err != nil {
		return nil, true, err
	}
	c := l.costOf(p)
	if b.spent+c > b.max {
		return nil, false, nil
	}
	b.spent += c
	if b.yield != nil {
		b.yield(ctx)
	}
	ev, err = l.runWith(ctx, p, sim.RunOptions{Points: -1})
	if err != nil {
		return nil, true, err
	}
	l.annotate(d, p, ev)
	l.Release(ev)
	return ev, true, nil
}

// SkipLesson searches for the best design that leaves mechanic name out, starting from
// from (a design that passes, typically the reference solution) with the mechanic taken
// out. The result passes if the lesson can be skipped. It has no cost bound (CheckLesson
// has).
func (l *Level) SkipLesson(ctx context.Context, name string, from sim.Design) (*LessonSkip, error) {
	return l.skipLesson(ctx, name, from, &lessonBudget{max: math.MaxInt64})
}

func (l *Level) skipLesson(ctx context.Context, name string, from sim.Design, b *lessonBudget) (*LessonSkip, error) {
	m, ok := mechanics[name]
	if !ok {
		return nil, fmt.Errorf("no mechanic %q", name)
	}
	start := l.StartingDesign
	d := m.strip(l, start, from)
	out := &LessonSkip{Mechanic: name, Design: d}
	ev, ok, err := l.lessonVerdict(ctx, d, b)
	if err != nil {
		return nil, fmt.Errorf("%s taken out of the design: %w", name, err)
	}
	if !ok {
		return out, nil
	}
	out.Tried++
	complete := true
	for step := 0; step < lessonSteps && !ev.Passed && complete; step++ {
		best, bestV := d, violation(ev)
		var bestEv *Evaluation
		seen := map[string]bool{string(mustJSON(d)): true}
		for _, cd := range l.candidates(d, ev) {
			// A change that brings the mechanic back is taken out again: the search moves
			// among designs without it (min_replicas up is max_replicas up too, for a pool
			// that may not autoscale).
			cd.design = m.strip(l, start, cd.design)
			if key := string(mustJSON(cd.design)); seen[key] || m.uses(l, start, cd.design) {
				continue
			} else {
				seen[key] = true
			}
			cev, ran, err := l.lessonVerdict(ctx, cd.design, b)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				continue
			}
			if !ran {
				complete = false
				break
			}
			out.Tried++
			if v := violation(cev); cev.Passed || v < bestV {
				best, bestV, bestEv = cd.design, v, cev
				if cev.Passed {
					break
				}
			}
		}
		if bestEv == nil {
			break // nothing comes closer
		}
		d, ev = best, bestEv
	}
	out.Passed, out.Design, out.Verdict = ev.Passed, d, ev
	out.Complete = complete || ev.Passed
	return out, nil
}

// larger is the mechanic of a numeric knob set above the starting design's on some component
// of kind k; taking it out sets the knob back to the starting design's.
func larger(words string, k sim.Kind, name string) mechanic {
	return mechanic{words,
		func(l *Level, start, d sim.Design) bool { return l.largest(d, k, name) > l.largest(start, k, name) },
		func(l *Level, start, d sim.Design) sim.Design {
			return l.resetParams(start, d, func(kind sim.Kind) bool { return kind == k }, name)
		}}
}

func has(k sim.Kind) func(*Level, sim.Design, sim.Design) bool {
	return func(_ *Level, _, d sim.Design) bool {
		return slices.ContainsFunc(d.Components, func(c sim.Component) bool { return c.Type == k })
	}
}

// without takes every component of kind k out of a design; whoever called one calls what
// it called, so a CDN's origin becomes the entry and a queue's callers write to its database.
func without(k sim.Kind) func(*Level, sim.Design, sim.Design) sim.Design {
	return func(_ *Level, _, d sim.Design) sim.Design {
		gone := map[string]bool{}
		var out sim.Design
		for _, c := range d.Components {
			if c.Type == k {
				gone[c.ID] = true
			} else {
				out.Components = append(out.Components, c)
			}
		}
		seen := map[sim.Edge]bool{}
		add := func(e sim.Edge) {
			if !seen[e] && e.From != e.To {
				seen[e] = true
				out.Edges = append(out.Edges, e)
			}
		}
		for _, e := range d.Edges {
			switch {
			case !gone[e.From] && !gone[e.To]:
				add(e)
			case !gone[e.From] && gone[e.To] && k != sim.KindCache:
				for _, to := range callees(d, e.To) {
					if !gone[to] {
						add(sim.Edge{From: e.From, To: to})
					}
				}
			}
		}
		return out
	}
}

func paramOf(c sim.Component, name string) any {
	for _, s := range sim.Params(c.Type) {
		if s.Name == name {
			return currentValue(c, s)
		}
	}
	return nil
}

func withParam(c sim.Component, name string, v any) sim.Component {
	out := c
	out.Params = make(map[string]json.RawMessage, len(c.Params)+1)
	maps.Copy(out.Params, c.Params)
	out.Params[name] = mustJSON(v)
	return out
}

func cloneDesign(d sim.Design) sim.Design {
	return sim.Design{Components: slices.Clone(d.Components), Edges: slices.Clone(d.Edges)}
}

// setAll sets a parameter of every component of kind k.
func setAll(d sim.Design, k sim.Kind, name string, v any) sim.Design {
	out := cloneDesign(d)
	for i, c := range out.Components {
		if c.Type == k {
			out.Components[i] = withParam(c, name, v)
		}
	}
	return out
}

// anyParam: some component of kind k has a value of the parameter that ok accepts.
func anyParam(d sim.Design, k sim.Kind, name string, ok func(any) bool) bool {
	return slices.ContainsFunc(d.Components, func(c sim.Component) bool { return c.Type == k && ok(paramOf(c, name)) })
}

// resetParams sets the named parameters of d's components of the kinds kind accepts to
// their values in the starting design (the component of the same id there, else the
// engine's defaults).
func (l *Level) resetParams(start, d sim.Design, kind func(sim.Kind) bool, names ...string) sim.Design {
	byID := map[string]sim.Component{}
	for _, c := range start.Components {
		byID[c.ID] = c
	}
	out := cloneDesign(d)
	for i, c := range out.Components {
		if !kind(c.Type) {
			continue
		}
		orig, ok := byID[c.ID]
		if !ok || orig.Type != c.Type {
			orig = sim.Component{ID: c.ID, Type: c.Type}
		}
		for _, name := range names {
			if paramOf(c, name) == nil {
				continue
			}
			if raw, set := orig.Params[name]; set {
				c = withParam(c, name, json.RawMessage(raw))
			} else {
				delete(c.Params, name)
			}
		}
		out.Components[i] = c
	}
	return out
}

// computeCapacity is a design's compute units weighted by speed: replicas (a pool's
// ceiling) times its instance type's speed.
func (l *Level) computeCapacity(d sim.Design) float64 {
	sum := 0.0
	for _, c := range d.Components {
		if !isCompute(c.Type) || c.Type == sim.KindServerless {
			continue
		}
		units := 0.0
		if c.Type == sim.KindContainerPool {
			units = paramOf(c, "max_replicas").(float64)
		} else {
			units = paramOf(c, "replicas").(float64)
		}
		sum += units * l.typeOf(c).Speed
	}
	return sum
}

// computeSpeed is the fastest instance type among d's app services and pools.
func (l *Level) computeSpeed(d sim.Design) float64 {
	return max(l.speedOf(d, sim.KindAppService), l.speedOf(d, sim.KindContainerPool))
}

// speedOf is the fastest instance type among d's components of kind k.
func (l *Level) speedOf(d sim.Design, k sim.Kind) float64 {
	best := 0.0
	for _, c := range d.Components {
		if c.Type == k {
			best = max(best, l.typeOf(c).Speed)
		}
	}
	return best
}

func (l *Level) typeOf(c sim.Component) sim.InstanceType {
	t, _ := paramOf(c, "instance_type").(string)
	if t == "" {
		t = defaultType(l.c.cfg.Catalog, c.Type)
	}
	return l.c.cfg.Catalog[t]
}

// largest is the largest value of a numeric parameter among d's components of kind k (0 if none).
func (l *Level) largest(d sim.Design, k sim.Kind, name string) float64 {
	best := 0.0
	for _, c := range d.Components {
		if c.Type == k {
			best = max(best, paramOf(c, name).(float64))
		}
	}
	return best
}

// smallest is the smallest queue_per_replica-like parameter among d's services (+Inf if none).
func (l *Level) smallest(d sim.Design, name string) float64 {
	best := math.Inf(1)
	for _, c := range d.Components {
		if isCompute(c.Type) {
			if x, ok := paramOf(c, name).(float64); ok {
				best = min(best, x)
			}
		}
	}
	return best
}

// smallestOf is the smallest value of a numeric parameter among d's components of kind k
// (+Inf if none).
func (l *Level) smallestOf(d sim.Design, k sim.Kind, name string) float64 {
	best := math.Inf(1)
	for _, c := range d.Components {
		if c.Type == k {
			best = min(best, paramOf(c, name).(float64))
		}
	}
	return best
}

// detection is the shortest time d's balancers with health checks take to notice a dead
// backend, interval × threshold (+Inf if no balancer checks).
func (l *Level) detection(d sim.Design) float64 {
	best := math.Inf(1)
	for _, c := range d.Components {
		if c.Type == sim.KindLoadBalancer && paramOf(c, "health_checks") == true {
			best = min(best, paramOf(c, "health_check_interval_sec").(float64)*paramOf(c, "unhealthy_threshold").(float64))
		}
	}
	return best
}

// MechanicWords says what a mechanic is, for a player ("a CDN in front"); "" if unknown.
func MechanicWords(name string) string { return mechanics[name].words }

// cacheMemory is the most memory among d's caches, by their instance types.
func (l *Level) cacheMemory(d sim.Design) float64 {
	best := 0.0
	for _, c := range d.Components {
		if c.Type == sim.KindCache {
			best = max(best, l.typeOf(c).MemoryGB)
		}
	}
	return best
}
