package challenges

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/sim"
)

func TestApplyPatch(t *testing.T) {
	d := sim.Design{
		Components: []sim.Component{
			{ID: "app", Type: sim.KindAppService},
			{ID: "db", Type: sim.KindDatabase, Params: map[string]json.RawMessage{"read_replicas": json.RawMessage(`1`)}},
		},
		Edges: []sim.Edge{{From: "app", To: "db"}},
	}
	got, err := ApplyPatch(d, []PatchOp{
		{Op: "add", Path: "/components/0/params", Value: json.RawMessage(`{"replicas":3}`)},
		{Op: "replace", Path: "/components/1/params/read_replicas", Value: json.RawMessage(`2`)},
		{Op: "add", Path: "/components/-", Value: json.RawMessage(`{"id":"cache","type":"cache"}`)},
		{Op: "add", Path: "/edges/-", Value: json.RawMessage(`{"from":"app","to":"cache"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Design{
		Components: []sim.Component{
			{ID: "app", Type: sim.KindAppService, Params: map[string]json.RawMessage{"replicas": json.RawMessage(`3`)}},
			{ID: "db", Type: sim.KindDatabase, Params: map[string]json.RawMessage{"read_replicas": json.RawMessage(`2`)}},
			{ID: "cache", Type: sim.KindCache},
		},
		Edges: []sim.Edge{{From: "app", To: "db"}, {From: "app", To: "cache"}},
	}
	if diff := cmp.Diff(string(mustJSON(want)), string(mustJSON(got))); diff != "" {
		t.Errorf("patched design (-want +got):\n%s", diff)
	}
	// The original is untouched.
	if len(d.Components) != 2 || d.Components[0].Params != nil || string(d.Components[1].Params["read_replicas"]) != "1" {
		t.Errorf("ApplyPatch modified its input: %+v", d)
	}
}

func TestApplyPatchErrors(t *testing.T) {
	d := sim.Design{Components: []sim.Component{{ID: "app", Type: sim.KindAppService}}}
	for _, op := range []PatchOp{
		{Op: "replace", Path: "/components/0/params/replicas", Value: json.RawMessage(`2`)},
		{Op: "replace", Path: "/components/5", Value: json.RawMessage(`{}`)},
		{Op: "move", Path: "/components/0", Value: json.RawMessage(`{}`)},
		{Op: "add", Path: "components", Value: json.RawMessage(`{}`)},
		{Op: "add", Path: "/components/-"},
	} {
		if _, err := ApplyPatch(d, []PatchOp{op}); err == nil {
			t.Errorf("ApplyPatch(%+v) succeeded, want an error", op)
		}
	}
}
