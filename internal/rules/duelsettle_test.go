package rules

import (
	"testing"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/sim"
)

// What a duel stores of each side's run is bounded whatever the design: a run of many
// components keeps fewer ticks of its timeline, never more than duelMaxTicksBytes of them.
func TestDuelStoresABoundedTimeline(t *testing.T) {
	for _, tt := range []struct {
		name       string
		components int
		wantPoints int
	}{
		{"two components keep every kept tick", 2, duelMaxPoints},
		{"128 components keep fewer", 128, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := &sim.Result{TickMs: 100, Components: make([]sim.ComponentInfo, tt.components), Ticks: make([]sim.Tick, 3000)}
			for i := range res.Ticks {
				res.Ticks[i].T = float64(i+1) / 10
				res.Ticks[i].Components = make([]sim.ComponentTick, tt.components)
			}
			rs, err := sideFrom(game.DuelResultSide{}, &challenges.Evaluation{Result: res}, nil)
			if err != nil {
				t.Fatal(err)
			}
			kept := (rs.TotalTicks + rs.Every - 1) / rs.Every
			if len(rs.Ticks) > duelMaxTicksBytes || rs.TotalTicks != 3000 {
				t.Errorf("stored %d bytes of timeline (%d ticks of %d); at most %d", len(rs.Ticks), kept, rs.TotalTicks, duelMaxTicksBytes)
			}
			if tt.wantPoints > 0 && kept != tt.wantPoints {
				t.Errorf("kept %d ticks, want %d", kept, tt.wantPoints)
			}
			if tt.wantPoints == 0 && kept >= duelMaxPoints {
				t.Errorf("kept %d ticks of 128 components; want fewer than %d", kept, duelMaxPoints)
			}
		})
	}
}
