package sim

import "math"

// rate is the offered load of the curve at time t seconds, spikes included.
func (tr *Traffic) rate(t float64) float64 {
	r := tr.RPS
	switch tr.Kind {
	case "ramp":
		switch {
		case t <= tr.StartSec:
		case t >= tr.EndSec:
			r = tr.ToRPS
		default:
			r = tr.RPS + (tr.ToRPS-tr.RPS)*(t-tr.StartSec)/(tr.EndSec-tr.StartSec)
		}
	case "step":
		for _, s := range tr.Steps {
			if t < s.AtSec {
				break
			}
			r = s.RPS
		}
	case "wave":
		r = tr.RPS + tr.AmplitudeRPS*math.Sin(2*math.Pi*(t+tr.PhaseSec)/tr.PeriodSec)
	}
	for _, s := range tr.Spikes {
		if t >= s.AtSec && t < s.AtSec+s.DurationSec {
			r += s.RPS
		}
	}
	return math.Max(r, 0)
}

// Rate is the offered load of the curve at time t seconds (for charts of a level's traffic).
func (tr Traffic) Rate(t float64) float64 { return tr.rate(t) }
