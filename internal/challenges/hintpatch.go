package challenges

import (
	"encoding/json"

	"backpressure/internal/sim"
)

// candidatePatcher applies the search's patches to the player's design: ApplyPatch, with the
// design's JSON document made once for all the candidates rather than encoded and decoded
// again for each (a hint tries about a hundred). Each patch goes to a copy of the document,
// which ApplyPatch's own decoding of the same bytes would have produced, so every patched
// design is ApplyPatch's.
type candidatePatcher struct {
	doc any
	err error
}

func newCandidatePatcher(d sim.Design) *candidatePatcher {
	raw, err := json.Marshal(d)
	if err != nil {
		return &candidatePatcher{err: err}
	}
	p := &candidatePatcher{}
	p.err = json.Unmarshal(raw, &p.doc)
	return p
}

// apply is ApplyPatch(d, ops) for the design the patcher was made for.
func (p *candidatePatcher) apply(ops []PatchOp) (sim.Design, error) {
	if p.err != nil {
		return sim.Design{}, p.err
	}
	doc := cloneDoc(p.doc)
	var err error
	for _, op := range ops {
		if doc, err = applyOp(doc, op); err != nil {
			return sim.Design{}, err
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return sim.Design{}, err
	}
	var out sim.Design
	if err := json.Unmarshal(raw, &out); err != nil {
		return sim.Design{}, err
	}
	return out, nil
}

// cloneDoc is a deep copy of a decoded JSON document: setAt changes maps and arrays in place.
func cloneDoc(v any) any {
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, x := range n {
			out[k] = cloneDoc(x)
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, x := range n {
			out[i] = cloneDoc(x)
		}
		return out
	}
	return v // a string, number, boolean or null: never changed in place
}
