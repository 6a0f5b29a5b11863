package challenges

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Strict decoding. encoding/json stops at the first problem, matches keys case-insensitively,
// keeps the last of duplicate keys and says nothing about where a mismatch is; an author
// needs every problem at once, each with its JSON path. So a document is first parsed into a
// tree (which catches syntax errors, duplicate keys and excessive nesting), then the tree is
// walked against the Go type: unknown fields, wrong JSON types, fractional or out-of-range
// integers are reported with their paths and left at their zero value, and everything else
// is assigned. Semantic validation then runs on what could be decoded.

// maxDepth bounds nesting: no level needs more than a dozen, and a bound keeps the
// recursive walk safe on hostile input.
const maxDepth = 64

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// jnode is one parsed JSON value; objects keep their keys in document order.
type jnode struct {
	kind  jkind
	b     bool
	num   json.Number
	str   string
	keys  []string
	vals  []*jnode
	items []*jnode
}

// decodeStrict decodes one JSON document into v (a pointer), prefixing every problem's
// path with prefix. It reports whether the document was syntactically valid JSON (if not,
// v is untouched and the single problem says where it broke).
func decodeStrict(data []byte, v any, prefix string, ps *Problems) bool {
	root, err := parseTree(data, ps, prefix)
	if err != nil {
		ps.add(prefix, err.Error())
		return false
	}
	assign(root, reflect.ValueOf(v).Elem(), prefix, ps)
	return true
}

func parseTree(data []byte, ps *Problems, prefix string) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := parseValue(dec, prefix, 0, ps)
	if err != nil {
		return nil, syntaxProblem(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("has more than one JSON value (at line %d)", lineOf(data, dec.InputOffset()))
	}
	return root, nil
}

var errTooDeep = errors.New("too deep")

func parseValue(dec *json.Decoder, path string, depth int, ps *Problems) (*jnode, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jnode{kind: jNull}, nil
	case bool:
		return &jnode{kind: jBool, b: t}, nil
	case json.Number:
		return &jnode{kind: jNumber, num: t}, nil
	case string:
		return &jnode{kind: jString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &jnode{kind: jArray}
			for dec.More() {
				item, err := parseValue(dec, index(path, len(n.items)), depth+1, ps)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			_, err := dec.Token() // ']'
			return n, err
		case '{':
			n := &jnode{kind: jObject}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				val, err := parseValue(dec, join(path, key), depth+1, ps)
				if err != nil {
					return nil, err
				}
				if seen[key] {
					ps.add(join(path, key), "appears more than once in the same object")
					continue
				}
				seen[key] = true
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token() // '}'
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func syntaxProblem(data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, errTooDeep):
		return fmt.Errorf("nests deeper than %d levels", maxDepth)
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return fmt.Errorf("is not valid JSON: %s (line %d, column %d)", se.Error(), line, col)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if len(bytes.TrimSpace(data)) == 0 {
			return errors.New("is empty: expected a JSON object")
		}
		return errors.New("is not valid JSON: it ends in the middle of a value")
	}
	line, col := lineCol(data, dec.InputOffset())
	return fmt.Errorf("is not valid JSON: %v (line %d, column %d)", err, line, col)
}

func lineOf(data []byte, off int64) int { l, _ := lineCol(data, off); return l }

func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// assign stores n into v, reporting every mismatch under path.
func assign(n *jnode, v reflect.Value, path string, ps *Problems) {
	t := v.Type()
	if t == rawMessageType {
		raw, _ := json.Marshal(toAny(n))
		v.SetBytes(raw)
		return
	}
	if t.Kind() == reflect.Pointer {
		if n.kind == jNull {
			v.SetZero()
			return
		}
		p := reflect.New(t.Elem())
		assign(n, p.Elem(), path, ps)
		v.Set(p)
		return
	}
	want := func(what string) {
		ps.addf(path, "must be %s, not %s", what, describe(n))
	}
	switch t.Kind() {
	case reflect.Interface:
		v.Set(reflect.ValueOf(toAny(n)))
	case reflect.Struct:
		if n.kind != jObject {
			want("an object")
			return
		}
		fields := jsonFields(t)
		for i, key := range n.keys {
			f, ok := fields[key]
			if !ok {
				ps.add(join(path, key), unknownField(key, fields))
				continue
			}
			assign(n.vals[i], v.FieldByIndex(f), join(path, key), ps)
		}
	case reflect.Map:
		if n.kind == jNull {
			v.SetZero()
			return
		}
		if n.kind != jObject {
			want("an object")
			return
		}
		m := reflect.MakeMapWithSize(t, len(n.keys))
		for i, key := range n.keys {
			ev := reflect.New(t.Elem()).Elem()
			assign(n.vals[i], ev, join(path, key), ps)
			m.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), ev)
		}
		v.Set(m)
	case reflect.Slice:
		if n.kind == jNull {
			v.SetZero()
			return
		}
		if n.kind != jArray {
			want("an array")
			return
		}
		s := reflect.MakeSlice(t, len(n.items), len(n.items))
		for i, item := range n.items {
			assign(item, s.Index(i), index(path, i), ps)
		}
		v.Set(s)
	case reflect.String:
		if n.kind != jString {
			want("a string")
			return
		}
		v.SetString(n.str)
	case reflect.Bool:
		if n.kind != jBool {
			want("true or false")
			return
		}
		v.SetBool(n.b)
	case reflect.Float32, reflect.Float64:
		if n.kind != jNumber {
			want("a number")
			return
		}
		x, err := strconv.ParseFloat(string(n.num), 64)
		if err != nil || math.IsInf(x, 0) {
			ps.addf(path, "is out of range (%s)", n.num)
			return
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.kind != jNumber {
			want("a whole number")
			return
		}
		x, err := strconv.ParseFloat(string(n.num), 64)
		if err != nil || x != math.Trunc(x) {
			ps.addf(path, "must be a whole number, not %s", n.num)
			return
		}
		if v.OverflowInt(int64(x)) || math.Abs(x) > 1<<53 {
			ps.addf(path, "is out of range (%s)", n.num)
			return
		}
		v.SetInt(int64(x))
	default:
		ps.addf(path, "cannot be decoded (unsupported field type %s)", t)
	}
}

func describe(n *jnode) string {
	switch n.kind {
	case jString:
		return fmt.Sprintf("the string %q", truncate(n.str, 40))
	case jNumber:
		return "the number " + string(n.num)
	case jBool:
		return strconv.FormatBool(n.b)
	}
	return n.kind.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func unknownField(key string, fields map[string][]int) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
		if strings.EqualFold(name, key) {
			return fmt.Sprintf("is not a known field; did you mean %q? (names are case-sensitive)", name)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("is not a known field (known: %s)", strings.Join(names, ", "))
}

// jsonFields maps the JSON names of a struct's fields to their indices, following
// encoding/json's tag rules for the subset used here (no embedding).
func jsonFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Index
	}
	return out
}

// toAny converts a tree to the generic values encoding/json produces (numbers kept exact).
func toAny(n *jnode) any {
	switch n.kind {
	case jBool:
		return n.b
	case jNumber:
		return n.num
	case jString:
		return n.str
	case jArray:
		out := make([]any, len(n.items))
		for i, item := range n.items {
			out[i] = toAny(item)
		}
		return out
	case jObject:
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			out[k] = toAny(n.vals[i])
		}
		return out
	}
	return nil
}
