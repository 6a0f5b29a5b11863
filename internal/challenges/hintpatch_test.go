package challenges

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"backpressure/internal/sim"
)

// The patcher's designs are ApplyPatch's, value for value (nil and empty maps told apart):
// for every candidate of every level's starting design, and for patches that reach the
// corners of the round trip.
func TestCandidatePatcherIsApplyPatch(t *testing.T) {
	check := func(name string, d sim.Design, ops []PatchOp) {
		t.Helper()
		want, wantErr := ApplyPatch(d, ops)
		got, gotErr := newCandidatePatcher(d).apply(ops)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%s: %v: error %v, want %v", name, ops, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v:\n got %#v\nwant %#v", name, ops, got, want)
		}
	}
	levels, err := Campaign()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range levels {
		before, err := l.Evaluate(context.Background(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.candidates(l.StartingDesign, before) {
			check(l.Slug, l.StartingDesign, c.change.Patch)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no candidates")
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	d := sim.Design{
		Components: []sim.Component{
			{ID: "lb", Type: sim.KindLoadBalancer, Params: map[string]json.RawMessage{}},
			{ID: "app", Type: sim.KindAppService, Params: map[string]json.RawMessage{"instances": raw(" 4.0 "), "note": raw(`"<a>"`)}},
			{ID: "db\xff", Type: sim.KindDatabase},
		},
		Edges: []sim.Edge{{From: "lb", To: "app"}},
	}
	op := func(o, path, v string) PatchOp { return PatchOp{Op: o, Path: path, Value: raw(v)} }
	for _, ops := range [][]PatchOp{
		nil,
		{op("replace", "/components/1/params/instances", "5")},
		{op("replace", "/components/1/params/workers", "5")},
		{op("add", "/components/1/params/workers", "1e2")},
		{op("add", "/components/1/params/workers", "null")},
		{op("add", "/components/1/params/big", "12345678901234567890")},
		{op("add", "/components/0/params/workers", "5")},
		{op("add", "/components/2/params/workers", "5")},
		{op("add", "/components/2/params", `{"instances": 2, "x": "\u00e9"}`)},
		{op("add", "/components/0/params", `{}`), op("add", "/components/0/params/y", "1")},
		{op("add", "/components/0/params", `{}`)},
		{op("add", "/components/+1/params/instances", "2")},
		{op("add", "/components/01/params/instances", "2")},
		{op("add", "/components/3/params/instances", "2")},
		{op("add", "/components/1/params/a~1b", "2")},
		{op("add", "/components/-", `{"id": "cache", "type": "cache", "params": {"instance_type": "cache.large"}}`),
			op("add", "/edges/-", `{"from": "app", "to": "cache"}`), op("add", "/edges/-", `{"from": "app", "to": "db"}`)},
		{op("add", "/components/-", `{"id": "q", "type": "queue", "params": {}}`)},
		{op("add", "/components/-", `null`)},
		{op("add", "/edges/-", `[1]`)},
		{op("remove", "/edges/0", "")},
		{op("add", "/components/1/params/instances", "")},
		{op("add", "/components/1/params/instances", "{")},
	} {
		check("corners", d, ops)
		check("no edges", sim.Design{Components: d.Components}, ops)
		check("empty", sim.Design{}, ops)
	}
}
