package challenges

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"backpressure/internal/sim"
)

// candidatePatcher applies the search's patches to the player's design: ApplyPatch, made
// once for all the candidates (a hint tries about a hundred) rather than encoding and
// decoding the whole design again for each.
//
// ApplyPatch's design is a round trip through JSON of the patched document: every string and
// number as encoding/json writes it back (a parameter "4.0" becomes 4, a number beyond
// float64's precision is rounded), parameters left empty dropped. The patcher makes that round
// trip of the player's design once (base) and applies the search's own operations, a
// parameter added or replaced and a component or edge appended, to a copy of it, each value
// in its round-tripped form: what ApplyPatch makes, to the byte (TestCandidatePatcherIsApplyPatch).
// Any other operation, and any the document would refuse, goes to the document itself.
type candidatePatcher struct {
	d    sim.Design
	base sim.Design
	doc  any // the player's design as ApplyPatch decodes it, made on first need
	err  error
}

func newCandidatePatcher(d sim.Design) *candidatePatcher {
	p := &candidatePatcher{d: d}
	p.base, p.err = ApplyPatch(d, nil)
	return p
}

// apply is ApplyPatch(d, ops) for the design the patcher was made for.
func (p *candidatePatcher) apply(ops []PatchOp) (sim.Design, error) {
	if p.err != nil {
		return sim.Design{}, p.err
	}
	out := sim.Design{Components: p.base.Components, Edges: p.base.Edges}
	owned := map[int]bool{} // components whose params are this design's copy
	for _, op := range ops {
		if !p.applyOp(&out, owned, op) {
			return p.applyDoc(ops)
		}
	}
	return out, nil
}

// applyOp applies one of the search's own operations to d in round-tripped form, or reports
// that it is not one (or one the document would refuse) and leaves d to be discarded.
func (p *candidatePatcher) applyOp(d *sim.Design, owned map[int]bool, op PatchOp) bool {
	if op.Op != "add" && op.Op != "replace" || len(op.Value) == 0 {
		return false
	}
	switch tokens := strings.Split(op.Path, "/"); {
	case op.Op == "add" && op.Path == "/components/-":
		var c sim.Component
		if !roundTrip(op.Value, &c) || d.Components == nil {
			return false
		}
		d.Components = append(slices.Clip(d.Components), c)
	case op.Op == "add" && op.Path == "/edges/-":
		var e sim.Edge
		if !roundTrip(op.Value, &e) || d.Edges == nil {
			return false
		}
		d.Edges = append(slices.Clip(d.Edges), e)
	case len(tokens) == 4 && tokens[1] == "components" && tokens[3] == "params" && op.Op == "add":
		i, ok := componentIndex(d, tokens[2])
		var params map[string]json.RawMessage
		if !ok || !roundTrip(op.Value, &params) {
			return false
		}
		d.Components = slices.Clone(d.Components)
		d.Components[i].Params = params
		owned[i] = true
	case len(tokens) == 5 && tokens[1] == "components" && tokens[3] == "params" && !strings.Contains(tokens[4], "~"):
		i, ok := componentIndex(d, tokens[2])
		if !ok || d.Components[i].Params == nil {
			return false // no params object to set a parameter in
		}
		name := tokens[4]
		if _, set := d.Components[i].Params[name]; op.Op == "replace" && !set {
			return false
		}
		v, ok := roundTripped(op.Value)
		if !ok {
			return false
		}
		if !owned[i] {
			d.Components = slices.Clone(d.Components)
			d.Components[i].Params = maps.Clone(d.Components[i].Params)
			owned[i] = true
		}
		d.Components[i].Params[name] = v
	default:
		return false
	}
	return true
}

// componentIndex is the component a path token names, if it is a plain index in range.
func componentIndex(d *sim.Design, tok string) (int, bool) {
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i >= len(d.Components) || strconv.Itoa(i) != tok {
		return 0, false
	}
	return i, true
}

// roundTripped is a JSON value as the round trip writes it back.
func roundTripped(raw json.RawMessage) (json.RawMessage, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// roundTrip decodes a JSON value into dst as the round trip does: from its canonical form.
func roundTrip(raw json.RawMessage, dst any) bool {
	b, ok := roundTripped(raw)
	if !ok || b[0] != '{' {
		return false
	}
	return json.Unmarshal(b, dst) == nil
}

// applyDoc is ApplyPatch itself, on a copy of the design's document decoded once.
func (p *candidatePatcher) applyDoc(ops []PatchOp) (sim.Design, error) {
	if p.doc == nil {
		raw, err := json.Marshal(p.d)
		if err != nil {
			return sim.Design{}, err
		}
		if err := json.Unmarshal(raw, &p.doc); err != nil {
			return sim.Design{}, err
		}
	}
	doc := cloneDoc(p.doc)
	var err error
	for _, op := range ops {
		if doc, err = applyOp(doc, op); err != nil {
			return sim.Design{}, err
		}
	}
	return designOf(doc)
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
