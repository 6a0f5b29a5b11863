package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/challenges"
	"backpressure/internal/rules"
)

// The streamed dry-run response is the same JSON document encoding/json
// makes of the whole response at once.
func TestWriteSimulationMatchesWholeEncoding(t *testing.T) {
	levels, err := challenges.Campaign()
	if err != nil {
		t.Fatal(err)
	}
	l := levels[0]
	ev, err := l.Evaluate(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	for _, maxPoints := range []int{0, 2, 7, DefaultMaxPoints} {
		res, every := rules.Downsample(ev.Result, maxPoints)
		resp := simulationResponse{Slug: l.Slug, Version: 3, Evaluation: ev, Result: res, Every: every, TotalTicks: len(ev.Result.Ticks)}
		rec := httptest.NewRecorder()
		s := &server{cfg: Config{}.WithDefaults()}
		s.writeSimulation(rec, httptest.NewRequest(http.MethodPost, "/v1/simulations", nil), resp)
		whole, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("max_points %d: the streamed body is not JSON: %v", maxPoints, err)
		}
		_ = json.Unmarshal(whole, &want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("max_points %d: streamed differs from whole (-want +got):\n%s", maxPoints, diff)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" || rec.Code != 200 {
			t.Errorf("status %d, Content-Type %q", rec.Code, ct)
		}
	}
}
