package sim

import "testing"

// The engine walks a node's subtree as the run of indices after it (gateOutcome): that holds
// only if routes are built depth first. Checked against the parent links on random designs
// and on the benchmark designs.
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
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d designs compiled; the check needs more", checked)
	}
}
