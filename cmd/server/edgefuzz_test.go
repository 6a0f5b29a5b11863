package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backpressure/internal/game"
)

// The route fuzz targets drive every /v1 operation of the OpenAPI document
// through a real server on PostgreSQL: one input at a time (a path, query or
// header parameter, or a top-level body field) is replaced by a value from
// in and around what the document declares for it (its minimum and maximum,
// one past them, the 32- and 64-bit limits, other types, hostile strings),
// the rest of the request staying valid. No input may be answered with a
// 5xx. The seed corpus is generated from the document, so a new route or
// parameter is fuzzed without touching this file.

// edgeOp is one documented operation with its inputs.
type edgeOp struct {
	method, path string // path is the template
	inputs       []edgeInput
}

// edgeInput is one parameter or top-level body field.
type edgeInput struct {
	in     string // path, query, header, body
	name   string
	schema map[string]any
}

func loadEdgeOps(t testing.TB, document []byte) []edgeOp {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(s map[string]any) map[string]any {
		for i := 0; i < 8; i++ {
			ref, ok := s["$ref"].(string)
			if !ok {
				break
			}
			s = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		}
		return s
	}
	var ops []edgeOp
	for path, item := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method, raw := range item {
			var op struct {
				Parameters []struct {
					Name   string         `json:"name"`
					In     string         `json:"in"`
					Schema map[string]any `json:"schema"`
				} `json:"parameters"`
				RequestBody struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			e := edgeOp{method: strings.ToUpper(method), path: path}
			for _, p := range op.Parameters {
				e.inputs = append(e.inputs, edgeInput{in: p.In, name: p.Name, schema: resolve(p.Schema)})
			}
			if body, ok := op.RequestBody.Content["application/json"]; ok {
				props, _ := resolve(body.Schema)["properties"].(map[string]any)
				for name, ps := range props {
					m, _ := ps.(map[string]any)
					e.inputs = append(e.inputs, edgeInput{in: "body", name: name, schema: resolve(m)})
				}
			}
			slices.SortFunc(e.inputs, func(a, b edgeInput) int { return strings.Compare(a.in+a.name, b.in+b.name) })
			ops = append(ops, e)
		}
	}
	slices.SortFunc(ops, func(a, b edgeOp) int { return strings.Compare(a.path+a.method, b.path+b.method) })
	return ops
}

// edgeValues are the values tried for one input: its declared bounds and
// one past them, the integer limits of common storage types, other JSON
// types, and strings no field should choke on. Values are JSON text for
// body fields and raw text for parameters.
func edgeValues(schema map[string]any) []string {
	vals := []string{"0", "-1", "1", "2147483647", "2147483648", "4294967296", "9223372036854775807",
		"9223372036854775808", "-9223372036854775809", "1e400", "1.5", "-0", "null", "true", `"x"`, `[]`, `{}`,
		`""`, `"\u0000"`, strconv.Quote(strings.Repeat("a", 5000)), `"../../etc"`, `"é"`, `"%00"`}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength"} {
		if v, ok := schema[k].(float64); ok {
			for _, d := range []float64{-1, 0, 1} {
				n := v + d
				if strings.HasSuffix(k, "Length") {
					if n >= 0 && n < 1<<16 {
						vals = append(vals, strconv.Quote(strings.Repeat("b", int(n))))
					}
					continue
				}
				vals = append(vals, strconv.FormatFloat(n, 'f', -1, 64))
			}
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		for _, e := range enum {
			b, _ := json.Marshal(e)
			vals = append(vals, string(b), strings.ToUpper(string(b)))
		}
	}
	return vals
}

// edgeTarget is the running server and the valid request each operation
// starts from.
type edgeTarget struct {
	s                    *testServer
	player, author, slug string
	playerID             string
	ops                  []edgeOp
	// A duel of player's, challenging rival.
	duelID, rivalID string
}

func newEdgeTarget(t testing.TB) *edgeTarget {
	env := testEnv(t)
	env["SIM_TIMEOUT"] = "30s"
	s := startServer(t, env)
	e := &edgeTarget{s: s, slug: tutorial}
	status, document := e.send("GET", "/openapi.json", "", nil, nil)
	if status != 200 {
		t.Fatalf("GET /openapi.json: %d", status)
	}
	e.ops = loadEdgeOps(t, document)
	var out struct {
		Player player `json:"player"`
		Token  string `json:"token"`
	}
	mustRaw := func(want int, method, path, token string, body any, v any) {
		status, raw := e.send(method, path, token, nil, body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, raw)
		}
		if v != nil {
			_ = json.Unmarshal(raw, v)
		}
	}
	mustRaw(201, "POST", "/v1/players", "", map[string]any{"name": "edge"}, &out)
	e.player, e.playerID = out.Token, out.Player.ID
	mustRaw(201, "POST", "/v1/players", "", map[string]any{"name": "edge-author"}, &out)
	e.author = out.Token
	mustRaw(200, "PUT", "/v1/players/"+out.Player.ID+"/role", s.adminToken, map[string]any{"role": "author"}, nil)
	mustRaw(201, "POST", "/v1/challenges/"+tutorial+"/submissions", e.player, map[string]any{"design": design(2)}, nil)
	mustRaw(201, "POST", "/v1/players", "", map[string]any{"name": "edge-rival"}, &out)
	e.rivalID = out.Player.ID
	var duel struct {
		ID string `json:"id"`
	}
	mustRaw(201, "POST", "/v1/duels", e.player, map[string]any{"level": tutorial, "opponent": e.rivalID}, &duel)
	e.duelID = duel.ID
	return e
}

// send is one request; a transport error is reported as status 0.
func (e *edgeTarget) send(method, path, token string, header map[string]string, body any) (int, []byte) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	rq, err := http.NewRequest(method, e.s.base+path, rd)
	if err != nil {
		return -1, []byte(err.Error())
	}
	if rd != nil {
		rq.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		rq.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		rq.Header.Set(k, v)
	}
	timeout := 90 * time.Second
	if p, _, _ := strings.Cut(path, "?"); strings.HasSuffix(p, "/stream") {
		// A live stream never ends: its status is what is checked.
		timeout = 2 * time.Second
	}
	client := &http.Client{Timeout: timeout}
	resp, err := client.Do(rq)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// request builds op's valid request with input i (if i >= 0) set to value.
func (e *edgeTarget) request(op edgeOp, i int, value string) (path, token string, header map[string]string, body []byte) {
	params := map[string]string{"slug": e.slug, "id": e.playerID}
	query := url.Values{}
	header = map[string]string{}
	fields := map[string]any{}
	switch {
	case op.method == "PUT" && strings.HasSuffix(op.path, "/role"):
		token, fields["role"] = e.s.adminToken, "player"
	case op.path == "/v1/players" && op.method == "POST":
		fields["name"] = fmt.Sprintf("p-%d", time.Now().UnixNano())
	case op.path == "/v1/simulations":
		token, fields["level"], fields["design"], fields["max_points"] = e.player, tutorial, design(2), 10
	case strings.HasSuffix(op.path, "/hint"), strings.HasSuffix(op.path, "/submissions"):
		token, fields["design"] = e.player, design(2)
	case strings.HasPrefix(op.path, "/v1/duels"):
		token, params["id"] = e.player, e.duelID
		switch {
		case op.path == "/v1/duels" && op.method == "POST":
			fields["level"], fields["opponent"] = tutorial, e.rivalID
		case strings.HasSuffix(op.path, "/design"):
			fields["design"] = design(2)
		}
	case op.method == "POST" || op.method == "PUT":
		token = e.author
	default:
		token = e.player
	}
	bodyRaw := map[string]json.RawMessage{}
	for k, v := range fields {
		b, _ := json.Marshal(v)
		bodyRaw[k] = b
	}
	if i >= 0 {
		in := op.inputs[i]
		text := value
		var s string
		if json.Unmarshal([]byte(value), &s) == nil {
			text = s // parameters take the string's content
		}
		switch in.in {
		case "path":
			params[in.name] = url.PathEscape(text)
		case "query":
			query.Set(in.name, text)
		case "header":
			header[in.name] = text
		case "body":
			if !json.Valid([]byte(value)) {
				value = strconv.Quote(value)
			}
			bodyRaw[in.name] = json.RawMessage(value)
		}
	}
	path = op.path
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if op.method == "POST" || op.method == "PUT" {
		if strings.HasPrefix(op.path, "/v1/challenges") && !strings.Contains(op.path, "/hint") && !strings.Contains(op.path, "/submissions") {
			// A level: the tutorial's own document under a new slug.
			return path, token, header, e.levelBody(i, op, value)
		}
		body, _ = json.Marshal(bodyRaw)
	}
	return path, token, header, body
}

func (e *edgeTarget) levelBody(i int, op edgeOp, value string) []byte {
	status, raw := e.send("GET", "/v1/challenges/"+tutorial, "", nil, nil)
	var c struct {
		Definition map[string]json.RawMessage `json:"definition"`
	}
	if status != 200 || json.Unmarshal(raw, &c) != nil {
		return []byte(`{}`)
	}
	slug := e.slug
	if op.method == "POST" {
		slug = fmt.Sprintf("edge-%d", time.Now().UnixNano())
	}
	c.Definition["slug"], _ = json.Marshal(slug)
	if i >= 0 && op.inputs[i].in == "body" {
		if !json.Valid([]byte(value)) {
			value = strconv.Quote(value)
		}
		c.Definition[op.inputs[i].name] = json.RawMessage(value)
	}
	b, _ := json.Marshal(c.Definition)
	return b
}

// sendableHeaderValue reports whether v may be a header's value on the wire (RFC 9110's
// field-value: no control character but a tab, which Go's client checks before sending).
func sendableHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}

// check sends op with input i set to value and fails on a 5xx.
func (e *edgeTarget) check(t *testing.T, opIndex, input int, value string) {
	if len(e.ops) == 0 {
		return
	}
	op := e.ops[(opIndex%len(e.ops)+len(e.ops))%len(e.ops)]
	if len(op.inputs) == 0 || input < 0 {
		input = -1
	} else {
		input = (input%len(op.inputs) + len(op.inputs)) % len(op.inputs)
	}
	if op.method == "PUT" && strings.HasPrefix(op.path, "/v1/challenges/{slug}") && input >= 0 && op.inputs[input].in == "path" {
		return // a PUT to a new slug creates a level: covered by the body's slug
	}
	path, token, header, body := e.request(op, input, value)
	for _, v := range header {
		if !sendableHeaderValue(v) {
			return // no HTTP client sends it, so no server sees it
		}
	}
	var b any
	if body != nil {
		b = body
	}
	status, raw := e.send(op.method, path, token, header, b)
	what := "(valid request)"
	if input >= 0 {
		what = op.inputs[input].in + " " + op.inputs[input].name + " = " + value
	}
	if status >= 500 || status == 0 {
		t.Errorf("%s %s with %s: %d %.300s", op.method, op.path, what, status, raw)
	}
}

// FuzzRoutes: for every documented operation and every one of its inputs,
// the values in and around its declared range never produce a 5xx.
func FuzzRoutes(f *testing.F) {
	if testing.Short() {
		f.Skip("needs PostgreSQL")
	}
	e := newEdgeTarget(f)
	for oi, op := range e.ops {
		f.Add(oi, -1, "")
		for ii, in := range op.inputs {
			for _, v := range edgeValues(in.schema) {
				f.Add(oi, ii, v)
			}
			if in.name == "cursor" {
				// Well-formed cursors at positions no board can hold.
				for _, at := range []int64{math.MinInt64, math.MaxInt64, -62135596800000000 - 1} {
					for _, score := range []int64{math.MinInt64, math.MaxInt64} {
						c := game.Cursor{Key: game.BoardKey{Score: score, AchievedAt: time.UnixMicro(at)}}
						f.Add(oi, ii, c.String())
						c.Before = true
						f.Add(oi, ii, c.String())
					}
				}
			}
		}
	}
	f.Cleanup(func() {
		if strings.Contains(e.s.logs.String(), `"status":500`) {
			f.Error("an input caused a 500 (see the log)")
		}
	})
	f.Fuzz(func(t *testing.T, op, input int, value string) {
		e.check(t, op, input, value)
	})
}
