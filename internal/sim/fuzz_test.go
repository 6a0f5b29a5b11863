package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// runInput is what the fuzzer decodes: a design and a run configuration.
type runInput struct {
	Design Design `json:"design"`
	Config Config `json:"config"`
}

// FuzzRun decodes arbitrary bytes as a design and configuration and runs whatever validates:
// no panic, and no NaN or infinity in the output.
func FuzzRun(f *testing.F) {
	for seed := uint64(1); seed <= 4; seed++ {
		d, cfg := randomDesign(seed)
		cfg.DurationSec = 2
		b, _ := json.Marshal(runInput{d, cfg})
		f.Add(b)
	}
	f.Add([]byte(`{"design":{"components":[{"id":"a","type":"app_service","params":{"replicas":1e308}}]},"config":{"duration_sec":1}}`))
	// Balancer checks, reads to replicas of their own type, and a failure to explain.
	f.Add([]byte(`{"design":{"components":[{"id":"lb","type":"load_balancer","params":{"health_check_interval_sec":0.5,"unhealthy_threshold":3}},
	 {"id":"a","type":"app_service"},{"id":"b","type":"app_service"},
	 {"id":"db","type":"database","params":{"read_replicas":1,"read_from":"replicas","replica_instance_type":"db.large"}}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"a","to":"db"},{"from":"b","to":"db"}]},
	 "config":{"duration_sec":5,"traffic":{"kind":"constant","rps":900},"mix":{"read":0.8,"write":0.2},"client":{"timeout_ms":500,"max_retries":2},
	 "chaos":[{"kind":"node_failure","at_sec":1,"duration_sec":2,"target":"a"},{"kind":"network_partition","at_sec":2,"duration_sec":2,"from":"lb","to":"b"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in runInput
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&in); err != nil {
			return
		}
		// Keep each case fast; the limits on size are checked by the validation tests.
		in.Config.DurationSec = min(in.Config.DurationSec, 5)
		in.Config.TickMs = max(in.Config.TickMs, 100)
		r, err := Run(context.Background(), in.Design, in.Config)
		if err != nil {
			if _, ok := err.(Problems); !ok {
				t.Fatalf("Run returned %T %v, want Problems", err, err)
			}
			return
		}
		if err := checkFinite(r); err != nil {
			t.Fatal(err)
		}
	})
}
