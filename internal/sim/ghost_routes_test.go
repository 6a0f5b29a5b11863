package sim

import (
	"math"
	"testing"
)

// Ghost work (attempts whose client has given up) is dealt by the same rule as live work:
// a health-checked balancer keeps sending a dead backend its share until the checks
// notice, and round-robin deals the ghosts in turn with the live requests, so that both
// reach a backend as the same regular stream.
func TestGhostWorkFollowsHealthChecksAndRoundRobin(t *testing.T) {
	d, cfg := threeBackends(0.8)()
	d = setParam(d, "lb", "health_checks", true)
	v, err := validate(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := compile(v)
	if err != nil {
		t.Fatal(err)
	}
	st := m.newRunState()
	lb, dead := -1, -1
	for i := range m.nodes {
		switch m.comps[m.nodes[i].comp].id {
		case "lb":
			if lb < 0 {
				lb = i
			}
		case "a":
			if dead < 0 {
				dead = i
			}
		}
	}
	if lb < 0 || dead < 0 || m.nodes[dead].parent != lb {
		t.Fatalf("no balancer node with backend a below it (lb %d, a %d)", lb, dead)
	}
	a := &m.comps[m.nodes[dead].comp]
	a.failed, a.failedSince, a.down.since = true, 0, 0
	st.events.outages = true
	detect := m.comps[m.nodes[lb].comp].detectSec
	if detect <= 0 {
		t.Fatalf("balancer detects a failure after %g s", detect)
	}
	for _, tc := range []struct {
		name      string
		tickStart float64
		deadShare float64
		ways      int
	}{
		{"before any phase of the checks notices", (detect - m.comps[m.nodes[lb].comp].checkIntervalSec) / 2, 1.0 / 3, 3},
		{"after the checks notice", detect + 1, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st.tickStart = tc.tickStart
			m.resetFlows()
			const amount = 90.0
			ways := map[int]int{}
			for _, ch := range m.nodes[lb].children {
				m.nodes[ch].rrWays = 0
			}
			m.forwardGhost(lb, amount, st) // first, so that the dealing read is its own
			for _, ch := range m.nodes[lb].children {
				ways[ch] = m.nodes[ch].rrWays
			}
			m.forward(lb, amount, st)
			for _, ch := range m.nodes[lb].children {
				c := &m.nodes[ch]
				if math.Abs(c.in-c.gin) > 1e-9 {
					t.Errorf("%s: live %g, ghost %g: not shared alike", m.comps[c.comp].id, c.in, c.gin)
				}
				want := (amount - tc.deadShare*amount) / 2
				if ch == dead {
					want = tc.deadShare * amount
				}
				if math.Abs(c.gin-want) > 1e-9 {
					t.Errorf("%s: ghost %g, want %g", m.comps[c.comp].id, c.gin, want)
				}
				if c.gin > 0 && ways[ch] != tc.ways {
					t.Errorf("%s: dealt over %d backends, want %d", m.comps[c.comp].id, ways[ch], tc.ways)
				}
			}
		})
	}
}
