package sim

import (
	"math"
	"testing"
)

// TestClampsAreTheBuiltins holds nonNegative and atMost to max(0, x) and min(x, bound) bit
// for bit, signed zeros included, for the bounds the engine uses. A NaN must stay a NaN; its
// payload is the compiler's (the builtin min itself returns another payload for some bounds).
func TestClampsAreTheBuiltins(t *testing.T) {
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	negZero := math.Copysign(0, -1)
	xs := []float64{0, negZero, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0.5, 1, 1 + 1e-16,
		-1, 999.9, maxReportedUtil, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, x := range xs {
		if got, want := nonNegative(x), max(0, x); !same(got, want) {
			t.Errorf("nonNegative(%g) = %g, want %g", x, got, want)
		}
		for _, bound := range []float64{1, maxReportedUtil} {
			if got, want := atMost(x, bound), min(x, bound); !same(got, want) {
				t.Errorf("atMost(%g, %g) = %g, want %g", x, bound, got, want)
			}
		}
	}
}
