package sim

import (
	"math"
	"testing"
)

// componentLatencyReference is componentLatency as it read before a component of one pool
// took its own path: one loop over the pools whatever their number.
func (m *model) componentLatencyReference(i int, st *runState) (mean, p99 float64) {
	cl := &st.lat.comps
	c := &m.comps[i]
	var in, sum, inAt float64
	settled := true
	for _, p := range c.pools {
		pl := &m.pools[p]
		w := servingInput(pl)
		prev := &cl.prev[p]
		settled = settled && *prev == pl.stage && w == cl.prevIn[p]
		*prev, cl.prevIn[p] = pl.stage, w
		in += w
		sum += w * pl.meanSec
		inAt += cl.inAt[p]
	}
	if in <= 0 {
		cl.computed[i] = false
		return 0, 0
	}
	mean = sum / in
	stale := !cl.computed[i]
	if !stale {
		tol, scale := latencyTolerance, latencyTolerance*cl.meanAt[i]
		if settled {
			tol, scale = 0, 0
		}
		if len(c.pools) == 1 {
			p := c.pools[0]
			stale = stageMovedReference(&cl.stageAt[p], &m.pools[p].stage, scale)
		}
		for _, p := range c.pools {
			if len(c.pools) == 1 {
				break
			}
			pl := &m.pools[p]
			w, w0 := servingInput(pl)/in, cl.inAt[p]/inAt
			if stageMovedReference(&cl.stageAt[p], &pl.stage, scale) || math.Abs(w-w0) > tol*max(w, w0) || (tol == 0 && w != w0) {
				stale = true
				break
			}
		}
	}
	if stale {
		st.compMix.Reset()
		for _, p := range c.pools {
			pl := &m.pools[p]
			cl.stageAt[p], cl.inAt[p] = pl.stage, servingInput(pl)
			if w := cl.inAt[p]; w > 0 {
				st.compMix.BeginPath(w)
				st.compMix.AddStage(pl.stage)
			}
		}
		p := 0.99
		if to := m.timeoutSec; to > 0 {
			p *= 1 - st.compMix.Tail(to)
		}
		var q [1]float64
		st.compMix.Quantiles([]float64{p}, q[:])
		cl.p99At[i], cl.meanAt[i], cl.computed[i] = q[0], mean, true
		return mean, m.belowTimeout(q[0])
	}
	p99 = cl.p99At[i]
	if cl.meanAt[i] > 0 {
		p99 *= mean / cl.meanAt[i]
	}
	return mean, m.belowTimeout(p99)
}

// TestComponentLatencyAsBefore follows every tick of the latencyCases with a second
// component latency state kept by the reference, and wants each component's mean and p99
// bit for bit, and the p99 recomputed at the same ticks.
func TestComponentLatencyAsBefore(t *testing.T) {
	onePool, computed := 0, 0
	for _, tc := range latencyCases() {
		m, v := compileCase(t, tc.d, tc.cfg)
		st := m.newRunState()
		ref := m.newRunState()
		records := make([]ComponentTick, len(m.comps))
		for tk := range v.ticks {
			tick := Tick{Components: records}
			m.step(tk, &tick, st)
			for i := range m.comps {
				mean, p99 := m.componentLatencyReference(i, ref)
				ct := &tick.Components[i]
				if math.Float64bits(ct.MeanMs) != math.Float64bits(mean*1000) || math.Float64bits(ct.P99Ms) != math.Float64bits(p99*1000) {
					t.Fatalf("%s tick %d %s: mean %v ms, p99 %v ms; want %v, %v", tc.name, tk, m.comps[i].id, ct.MeanMs, ct.P99Ms, mean*1000, p99*1000)
				}
				if got, want := st.lat.comps.meanAt[i], ref.lat.comps.meanAt[i]; math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s tick %d %s: p99 computed at a mean of %v, want %v", tc.name, tk, m.comps[i].id, got, want)
				}
				if len(m.comps[i].pools) == 1 {
					onePool++
				}
			}
		}
		for i := range m.comps {
			if st.lat.comps.computed[i] {
				computed++
			}
		}
	}
	if onePool == 0 || computed == 0 {
		t.Errorf("%d component ticks of one pool, %d p99s computed", onePool, computed)
	}
}
