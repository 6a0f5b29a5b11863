package sim

import (
	"math"
	"testing"
)

// A room's wait above its stationary one drains as du/dt = −(1 − ρ)·u ÷ (u + B): at the
// whole spare capacity while the excess is large, then ever more slowly, never below the
// stationary wait, and the same whether a stretch is taken in one step or in many (the
// equation is solved, not stepped).
func TestDrainTowardsTheStationaryWait(t *testing.T) {
	tests := []struct {
		name              string
		w, target, rho, b float64
		wantLow, wantHigh float64 // bounds of the wait after 0.5 s
	}{
		// An excess of 1 s against B = 64 ms: nearly the fluid drain of 0.04 s.
		{"large excess", 1.016, 0.016, 0.92, 0.064, 1.016 - 0.04, 1.016 - 0.04*(1-0.064/0.96)},
		// An excess of 1 ms against B = 64 ms: nearly the linear decay e^(−0.04/0.064).
		{"small excess", 0.017, 0.016, 0.92, 0.064, 0.016 + 0.001*math.Exp(-0.04/0.064), 0.016 + 0.001*math.Exp(-0.04/0.065)},
		{"drained", 0.05, 1e-9, 0.01, 4e-9, 1e-9, 1e-9},
		{"no settling time: a fluid", 0.5, 0.01, 0.9, 0, 0.45 - 1e-12, 0.45 + 1e-12},
		{"idle room", 0.05, 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := drainTowards(tt.w, tt.target, tt.rho, tt.b, 0.5)
			if got < tt.wantLow || got > tt.wantHigh {
				t.Errorf("drainTowards(%g, %g, %g, %g, 0.5) = %g, want within [%g, %g]", tt.w, tt.target, tt.rho, tt.b, got, tt.wantLow, tt.wantHigh)
			}
			w := tt.w
			for range 5 {
				w = drainTowards(w, tt.target, tt.rho, tt.b, 0.1)
			}
			if math.Abs(w-got) > 1e-9*max(got, 1e-9) {
				t.Errorf("five steps of 0.1 s reach %g, one of 0.5 s %g: want the same", w, got)
			}
		})
	}
}

// A small excess settles at the spectral gap of a reflected random walk of the room's queue:
// with no bound of places, B is four times the walk's stationary wait, s² ÷ 2δ requests
// drained at the room's capacity; a room of a few places settles within a moment whatever
// its load, so its B is a small fraction of that.
func TestSettlingOfARoom(t *testing.T) {
	r := room{workers: 8, mu: 20, cv2: 1, cs2: 1}
	r.offer(0.9 * 8)
	variance := r.lambda + r.capacity
	spare := r.capacity - r.lambda
	unbounded := r.settling(math.Inf(1))
	if want := 4 * variance / (2 * spare) / r.capacity; math.Abs(unbounded-want) > 1e-12*want {
		t.Errorf("unbounded room: B = %g s, want four times the walk's stationary wait, %g s", unbounded, want)
	}
	if wide := r.settling(1000); !(wide < unbounded && wide > 0.99*unbounded) {
		t.Errorf("a room of 1,000 places: B = %g s, want just under the unbounded %g s", wide, unbounded)
	}
	if narrow := r.settling(8); !(narrow < unbounded/4) {
		t.Errorf("a room of 8 places: B = %g s, want well under the unbounded %g s", narrow, unbounded)
	}
	light := room{workers: 8, mu: 20, cv2: 1, cs2: 1}
	light.offer(0.5 * 8)
	if b := light.settling(math.Inf(1)); !(b > 0 && b < unbounded) {
		t.Errorf("at 50%%: B = %g s, want a positive time shorter than the %g s at 90%%", b, unbounded)
	}
}
