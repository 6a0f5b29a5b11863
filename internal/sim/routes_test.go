package sim

import "testing"

// The engine walks a node's subtree as the run of indices after it (gateOutcome): that holds
// only if routes are built depth first. And it adds up a tick's losses by request type over
// runs of nodes (step, model.classEnd): that holds only if each type's client nodes come
// together, type by type, and background work after them all. Checked against the parent
// links and the nodes' own types on random designs and on the benchmark designs.
func TestSubtreesAreContiguous(t *testing.T) {
	var designs []Design
	var configs []Config
	for seed := uint64(1); seed <= 60; seed++ {
		d, cfg := randomDesign(seed)
		designs, configs = append(designs, d), append(configs, cfg)
	}
	designs = append(designs, serviceDesign(20), serviceDesign(64), benchDesign(20))
	configs = append(configs, benchConfig(10), benchConfig(10), benchConfig(10))
	checked := 0
	for k, d := range designs {
		v, err := validate(d, configs[k])
		if err != nil {
			continue
		}
		m, err := compile(v)
		if err != nil {
			continue
		}
		for i := range m.nodes {
			for j := range m.nodes {
				below := false
				for a := m.nodes[j].parent; a >= 0; a = m.nodes[a].parent {
					if a == i {
						below = true
						break
					}
				}
				if inRun := j > i && j < m.nodes[i].subtreeEnd; inRun != below {
					t.Fatalf("design %d: node %d below node %d is %v, but its index is in the run [%d, %d) is %v",
						k, j, i, below, i+1, m.nodes[i].subtreeEnd, inRun)
				}
			}
		}
		start := 0
		for class, end := range m.classEnd {
			for i := start; i < end; i++ {
				if nd := &m.nodes[i]; i != m.sinkNode && (nd.background || nd.class != Class(class)) {
					t.Fatalf("design %d: node %d (%s, background %v) is among the %s nodes [%d, %d)",
						k, i, nd.class, nd.background, Class(class), start, end)
				}
			}
			start = end
		}
		for i := start; i < len(m.nodes); i++ {
			if !m.nodes[i].background {
				t.Fatalf("design %d: client node %d comes after every type's nodes (%d)", k, i, start)
			}
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d designs compiled; the check needs more", checked)
	}
}
