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
