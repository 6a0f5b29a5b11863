package challenges

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"backpressure/internal/sim"
)

// PatchOp is one operation of a JSON Patch (RFC 6902). The hint speaks only "add" and
// "replace"; ApplyPatch also accepts "remove".
type PatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// ApplyPatch applies a JSON Patch to a design and returns the patched copy.
func ApplyPatch(d sim.Design, ops []PatchOp) (sim.Design, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return sim.Design{}, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return sim.Design{}, err
	}
	for i, op := range ops {
		if doc, err = applyOp(doc, op); err != nil {
			return sim.Design{}, fmt.Errorf("patch[%d] (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return designOf(doc)
}

// designOf is the design a patched JSON document describes.
func designOf(doc any) (sim.Design, error) {
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

func applyOp(doc any, op PatchOp) (any, error) {
	if op.Path == "" || !strings.HasPrefix(op.Path, "/") {
		return nil, fmt.Errorf("path must start with /")
	}
	tokens := strings.Split(op.Path[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	var value any
	if op.Op != "remove" {
		if len(op.Value) == 0 {
			return nil, fmt.Errorf("value is required")
		}
		if err := json.Unmarshal(op.Value, &value); err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
	}
	return setAt(doc, tokens, op.Op, value)
}

// setAt applies op at the path tokens below node and returns the new node.
func setAt(node any, tokens []string, op string, value any) (any, error) {
	last := len(tokens) == 1
	tok := tokens[0]
	switch n := node.(type) {
	case map[string]any:
		child, exists := n[tok]
		if !last {
			if !exists {
				return nil, fmt.Errorf("%q does not exist", tok)
			}
			v, err := setAt(child, tokens[1:], op, value)
			if err != nil {
				return nil, err
			}
			n[tok] = v
			return n, nil
		}
		switch op {
		case "add":
			n[tok] = value
		case "replace":
			if !exists {
				return nil, fmt.Errorf("%q does not exist", tok)
			}
			n[tok] = value
		case "remove":
			if !exists {
				return nil, fmt.Errorf("%q does not exist", tok)
			}
			delete(n, tok)
		default:
			return nil, fmt.Errorf("unsupported op %q", op)
		}
		return n, nil
	case []any:
		if last && tok == "-" && op == "add" {
			return append(n, value), nil
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i > len(n) || (i == len(n) && !(last && op == "add")) {
			return nil, fmt.Errorf("index %q is out of range", tok)
		}
		if !last {
			v, err := setAt(n[i], tokens[1:], op, value)
			if err != nil {
				return nil, err
			}
			n[i] = v
			return n, nil
		}
		switch op {
		case "add":
			n = append(n, nil)
			copy(n[i+1:], n[i:])
			n[i] = value
		case "replace":
			n[i] = value
		case "remove":
			n = append(n[:i], n[i+1:]...)
		default:
			return nil, fmt.Errorf("unsupported op %q", op)
		}
		return n, nil
	case nil:
		return nil, fmt.Errorf("%q does not exist", tok)
	}
	return nil, fmt.Errorf("%q: cannot index a scalar", tok)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on values built here
	}
	return b
}
