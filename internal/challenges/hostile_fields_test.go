package challenges

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"backpressure/internal/sim"
)

// hostileNumbers are values an attacker puts in a level's numeric fields: the smallest
// denormal, the largest float, their negatives, zero.
var hostileNumbers = []float64{5e-324, -5e-324, 1e308, -1e308, 0, 1e-300}

// numericLeaves lists the paths of every number in a generic JSON document.
func numericLeaves(v any, path string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			numericLeaves(x[k], join(path, k), out)
		}
	case []any:
		for i, item := range x {
			numericLeaves(item, index(path, i), out)
		}
	case float64:
		*out = append(*out, path)
	}
}

// setAt replaces the number at path (as numericLeaves names it) in a generic document.
func setNumberAt(doc any, path string, val float64) {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	cur := doc
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = val
				return
			}
			cur = c[p]
		case []any:
			var k int
			fmt.Sscan(p, &k)
			if last {
				c[k] = val
				return
			}
			cur = c[k]
		}
	}
}

// finiteTicks reports the first metric of a run that is not a finite number.
func finiteTicks(res *sim.Result) string {
	for _, t := range res.Ticks {
		v := reflect.ValueOf(t)
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
				return fmt.Sprintf("t=%g %s=%v", t.T, v.Type().Field(i).Name, f.Float())
			}
		}
		for ci, c := range t.Components {
			cv := reflect.ValueOf(c)
			for i := range cv.NumField() {
				f := cv.Field(i)
				if f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
					return fmt.Sprintf("t=%g component %d %s=%v", t.T, ci, cv.Type().Field(i).Name, f.Float())
				}
			}
		}
	}
	return ""
}

// TestHostileLevelNumbers puts hostile values in every numeric field of every campaign level
// (outside the starting design, which a player's own checks cover): each is either refused
// with a problem naming a field, or accepted and then simulated to finite numbers.
func TestHostileLevelNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every campaign level many times")
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "challenges", "*.json"))
	for _, file := range files {
		if strings.HasSuffix(file, "schema.json") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var leaves []string
		for _, top := range []string{"run", "sla", "budget_per_hour", "resilience", "catalog"} {
			if v, ok := doc[top]; ok {
				numericLeaves(v, top, &leaves)
			}
		}
		for _, leaf := range leaves {
			for _, val := range hostileNumbers {
				var m map[string]any
				_ = json.Unmarshal(data, &m)
				setNumberAt(m, leaf, val)
				b, _ := json.Marshal(m)
				l, err := parse(context.Background(), b, false)
				if err != nil {
					ps, ok := AsProblems(err)
					if !ok {
						t.Errorf("%s %s=%g: error %v is not Problems", filepath.Base(file), leaf, val, err)
					}
					for _, p := range ps {
						if p.Path == "" {
							t.Errorf("%s %s=%g: a problem names no field: %s", filepath.Base(file), leaf, val, p.Reason)
						}
					}
					continue
				}
				ev, err := l.Evaluate(context.Background(), l.StartingDesign)
				if err != nil {
					t.Errorf("%s %s=%g: accepted, then the starting design cannot run: %v", filepath.Base(file), leaf, val, err)
					continue
				}
				if bad := finiteTicks(ev.Result); bad != "" {
					t.Errorf("%s %s=%g: accepted, and the run has %s", filepath.Base(file), leaf, val, bad)
				}
			}
		}
	}
}

func TestLevelTrafficRefusals(t *testing.T) {
	tests := []struct {
		name    string
		traffic map[string]any
		want    string
	}{
		{"denormal wave period", map[string]any{"kind": "wave", "rps": 100.0, "amplitude_rps": 50.0, "period_sec": 5e-324}, "run.traffic.period_sec"},
		{"wave period under a tick", map[string]any{"kind": "wave", "rps": 100.0, "amplitude_rps": 50.0, "period_sec": 0.05}, "run.traffic.period_sec"},
		{"denormal rate", map[string]any{"kind": "constant", "rps": 5e-324}, "run.traffic.rps"},
		{"denormal ramp target", map[string]any{"kind": "ramp", "rps": 10.0, "to_rps": 1e-9, "start_sec": 1.0, "end_sec": 2.0}, "run.traffic.to_rps"},
		{"denormal spike", map[string]any{"kind": "constant", "rps": 10.0, "spikes": []any{map[string]any{"at_sec": 1.0, "duration_sec": 1.0, "rps": 1e-200}}}, "run.traffic.spikes[0].rps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := baseLevel(t)
			at(m, "run")["traffic"] = tt.traffic
			data, _ := json.Marshal(m)
			_, err := Parse(data)
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("Parse = %v, want problems", err)
			}
			if !slices.Contains(paths(ps), tt.want) {
				t.Errorf("problems %v, want one at %s", ps, tt.want)
			}
		})
	}
}

// A level whose largest permitted design would cost more than MaxLevelRunCost per run is
// refused at upload, naming the levers; the campaign's levels are well within it.
func TestLevelWorstCaseCostCeiling(t *testing.T) {
	m := baseLevel(t)
	at(m, "run")["tick_ms"] = 40.0
	at(m, "catalog", "components", "app_service")["max_count"] = 60.0
	data, _ := json.Marshal(m)
	_, err := Parse(data)
	ps, _ := AsProblems(err)
	found := false
	for _, p := range ps {
		found = found || (p.Path == "run.duration_sec" && strings.Contains(p.Reason, "worst-case run cost"))
	}
	if !found {
		t.Errorf("Parse = %v, want a worst-case cost problem at run.duration_sec", err)
	}
	levels, err := Campaign()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range levels {
		c, err := l.RunCost(l.StartingDesign)
		if err != nil || c <= 0 || c > l.WorstCaseCost() || l.WorstCaseCost() > MaxLevelRunCost {
			t.Errorf("%s: starting design costs %d (%v), worst case %d, ceiling %d", l.Slug, c, err, l.WorstCaseCost(), MaxLevelRunCost)
		}
	}
}
