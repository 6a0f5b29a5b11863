package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestValidationReportsEveryProblemWithItsPath(t *testing.T) {
	okCfg := constant(100, 10)
	tests := []struct {
		name   string
		design string
		cfg    func(*Config)
		want   []string // "path: fragment of the reason"
	}{
		{"unknown type and parameter, bad numbers, all at once",
			`{"components":[
			 {"id":"app","type":"app_service","params":{"replicas":-1,"concurrency":2.5,"colour":"red"}},
			 {"id":"x","type":"mainframe"}],"edges":[]}`, nil,
			[]string{"components[0].params.replicas: between", "components[0].params.concurrency: whole number",
				"components[0].params.colour: not a parameter", "components[1].type: not a component type"}},
		{"dangling, duplicate and self edges",
			`{"components":[{"id":"lb","type":"load_balancer"},{"id":"app","type":"app_service"}],
			 "edges":[{"from":"lb","to":"app"},{"from":"lb","to":"app"},{"from":"lb","to":"ghost"},{"from":"app","to":"app"}]}`, nil,
			[]string{"edges[1]: duplicates edges[0]", "edges[2].to: \"ghost\" is not a component", "edges[3]: itself"}},
		{"duplicate and bad ids",
			`{"components":[{"id":"a","type":"app_service"},{"id":"a","type":"app_service"},{"id":"","type":"cache"},{"id":"b c","type":"cache"}],"edges":[]}`, nil,
			[]string{"components[1].id: already", "components[2].id: required", "components[3].id: may contain only"}},
		{"no ingress",
			`{"components":[{"id":"db","type":"database"}],"edges":[]}`, nil,
			[]string{"components: has no ingress"}},
		{"unreachable component",
			`{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"},{"id":"cache","type":"cache"}],
			 "edges":[{"from":"app","to":"db"}]}`, nil,
			[]string{"components[2]: \"cache\" is unreachable"}},
		{"a cache calling a database",
			`{"components":[{"id":"app","type":"app_service"},{"id":"cache","type":"cache"},{"id":"db","type":"database"}],
			 "edges":[{"from":"app","to":"cache"},{"from":"cache","to":"db"}]}`, nil,
			[]string{"edges[1]: a cache cannot call a database (caches are cache-aside"}},
		{"a database calling an app service, in words",
			`{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],
			 "edges":[{"from":"app","to":"db"},{"from":"db","to":"app"}]}`, nil,
			[]string{"edges[1]: a database cannot call an app service (a database only replicates"}},
		{"zero capacity and catalog mismatch",
			`{"components":[{"id":"app","type":"app_service","params":{"service_time_ms":0,"instance_type":"db.large"}}],"edges":[]}`, nil,
			[]string{"components[0].params.service_time_ms: between", "components[0].params.instance_type: \"db.large\" is a database type"}},
		{"reads to replicas that do not exist, and replica types that are not database types",
			`{"components":[{"id":"app","type":"app_service"},
			 {"id":"db","type":"database","params":{"read_from":"replicas","replica_instance_type":"db.large"}},
			 {"id":"db2","type":"database","params":{"read_replicas":1,"replica_instance_type":"app.large","read_from":"primary"}},
			 {"id":"db3","type":"database","params":{"read_replicas":1,"replica_instance_type":"db.huge"}}],
			 "edges":[{"from":"app","to":"db"},{"from":"app","to":"db2"},{"from":"app","to":"db3"}]}`, nil,
			[]string{"components[1].params.read_from: has no read_replicas", "components[1].params.replica_instance_type: does not have",
				"components[2].params.replica_instance_type: \"app.large\" is a app_service type", "components[2].params.read_from: must be one of",
				"components[3].params.replica_instance_type: \"db.huge\" is not in the catalog"}},
		{"bad configuration",
			`{"components":[{"id":"app","type":"app_service"}],"edges":[]}`,
			func(c *Config) {
				c.DurationSec = 1e6
				c.TickMs = 5
				c.Mix = Mix{Read: 0.5}
				c.Traffic = Traffic{Kind: "sawtooth"}
				c.Client.MaxRetries = 99
			},
			[]string{"tick_ms: between", "mix: shares must sum to 1", "traffic.kind: \"sawtooth\"", "client.max_retries: between"}},
		{"too many ticks",
			`{"components":[{"id":"app","type":"app_service"}],"edges":[]}`,
			func(c *Config) { c.DurationSec = 1e6 },
			[]string{"duration_sec: gives 10000000 ticks"}},
		{"chaos with unknown targets and bad parameters",
			`{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			func(c *Config) {
				c.Chaos = []ChaosEvent{
					{Kind: ChaosNodeFailure, AtSec: 1, DurationSec: 1, Target: "ghost"},
					{Kind: ChaosTrafficSpike, AtSec: 1, DurationSec: 1},
					{Kind: ChaosCacheFlush, AtSec: 1, Target: "db"},
					{Kind: ChaosNetworkPartition, AtSec: 1, DurationSec: 1, From: "db", To: "app"},
					{Kind: ChaosNodeFailure, AtSec: 2, DurationSec: 5, Target: "db"},
					{Kind: ChaosNodeFailure, AtSec: 3, DurationSec: 5, Target: "db"},
					{Kind: "meteor", AtSec: 1},
				}
			},
			[]string{"chaos[0].target: \"ghost\"", "chaos[1].params.multiplier: must be positive",
				"chaos[2].target: \"db\" is a database", "chaos[3]: the design has no edge db → app",
				"chaos[5]: overlaps chaos[4]", "chaos[6].kind: \"meteor\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := okCfg
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			err := Validate(mustDesign(t, tt.design), cfg)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Validate = %v, want Problems", err)
			}
			for _, w := range tt.want {
				path, frag, _ := strings.Cut(w, ": ")
				found := false
				for _, p := range ps {
					if p.Path == path && strings.Contains(p.Reason, frag) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem %q; got %v", w, ps)
				}
			}
		})
	}
}

func TestValidInputHasNoProblems(t *testing.T) {
	d, cfg := randomDesign(3)
	if err := Validate(d, cfg); err != nil {
		t.Fatal(err)
	}
}

func TestValidateDoesNotChangeTheCallersConfig(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service"}],"edges":[]}`)
	cfg := constant(10, 1)
	cfg.Chaos = []ChaosEvent{{Kind: ChaosTrafficSpike, AtSec: 0.5, DurationSec: 0.2, Params: ChaosParams{Multiplier: 2}}}
	before, _ := json.Marshal(cfg)
	mustRun(t, d, cfg)
	after, _ := json.Marshal(cfg)
	if string(before) != string(after) {
		t.Errorf("config changed by the run:\n%s\n%s", before, after)
	}
}

func TestDenseServiceMeshIsRefusedNotSimulatedForever(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"components":[{"id":"lb","type":"load_balancer"}`)
	const n = 12
	for i := 0; i < n; i++ {
		b.WriteString(`,{"id":"s` + string(rune('a'+i)) + `","type":"app_service"}`)
	}
	b.WriteString(`],"edges":[`)
	first := true
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			b.WriteString(`{"from":"s` + string(rune('a'+i)) + `","to":"s` + string(rune('a'+j)) + `"}`)
		}
	}
	b.WriteString(`,{"from":"lb","to":"sa"}]}`)
	err := Validate(mustDesign(t, b.String()), constant(10, 1))
	var ps Problems
	if !errors.As(err, &ps) || ps[0].Path != "edges" {
		t.Fatalf("Validate = %v, want a problem at edges", err)
	}
}

// A parameter that is a plain number is read without a decoder: it must read as the
// decoder reads it, and anything else must still go to the decoder.
func TestNumberTextAsDecoded(t *testing.T) {
	for _, raw := range []string{"5", "-0", "0.25", "1.5e3", "2E-2", "1e400", "-1e400", "01", "1.", "-", " 5", "5 ",
		`"5"`, `"x"`, "true", "null", "[1]", "5x", "1e", "123456789012345678901234567890"} {
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		wantErr := dec.Decode(&n)
		got, ok := numberText(json.RawMessage(raw))
		if ok != (wantErr == nil) || ok && got != n.String() {
			t.Errorf("numberText(%q) = %q, %v; the decoder reads %q, %v", raw, got, ok, n.String(), wantErr)
		}
	}
}

// A catalog's problems are all reported, entry by entry in the order of their names.
func TestCatalogProblemsInOrder(t *testing.T) {
	cfg := constant(100, 10)
	cfg.Catalog = DefaultCatalog()
	var names []string
	for name := range cfg.Catalog {
		names = append(names, name)
	}
	slices.Sort(names)
	first, last := cfg.Catalog[names[0]], cfg.Catalog[names[len(names)-1]]
	first.Speed, first.BaseErrorRate = -1, math.NaN()
	last.PricePerHour, last.Kind = 2e6, "teleporter"
	cfg.Catalog[names[0]], cfg.Catalog[names[len(names)-1]] = first, last
	err := Validate(mustDesign(t, `{"components":[{"id":"a","type":"app_service"}],"edges":[]}`), cfg)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Validate = %v, want Problems", err)
	}
	var got []string
	for _, p := range ps {
		if strings.HasPrefix(p.Path, "catalog.") {
			got = append(got, p.Path)
		}
	}
	want := []string{"catalog." + names[0] + ".speed", "catalog." + names[0] + ".base_error_rate",
		"catalog." + names[len(names)-1] + ".kind", "catalog." + names[len(names)-1] + ".price_per_hour"}
	if !slices.Equal(got, want) {
		t.Errorf("catalog problems at %v, want %v", got, want)
	}
}

// A component that names no instance type gets its kind's default, else its kind's first
// type, the first by name on a tie.
func TestDefaultInstanceType(t *testing.T) {
	cat := Catalog{
		"z-app": {Kind: KindAppService, Default: true}, "m-app": {Kind: KindAppService, Default: true},
		"a-app": {Kind: KindAppService}, "b-db": {Kind: KindDatabase}, "a-db": {Kind: KindDatabase},
		"0-cache": {Kind: KindCache, Default: true},
	}
	for kind, want := range map[Kind]string{KindAppService: "m-app", KindDatabase: "a-db"} {
		var ps Problems
		got := resolveInstanceType(cat, kind, "", func() string { return "p" }, &ps)
		if got != cat[want] || len(ps) > 0 {
			t.Errorf("%s: got %+v (%v), want %s", kind, got, ps, want)
		}
	}
	var ps Problems
	resolveInstanceType(cat, KindQueue, "", func() string { return "p" }, &ps)
	if len(ps) != 1 || ps[0].Path != "p" {
		t.Errorf("a kind the catalog lacks: %v, want one problem at p", ps)
	}
}
