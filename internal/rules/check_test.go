package rules

import (
	"testing"

	"backpressure/internal/challenges"
)

// A design's summary names what failed in the units players read, or a
// passing design's tightest margin relative to its target.
func TestDesignCheckSummary(t *testing.T) {
	cond := func(name string, measured, target float64, unit string) challenges.Condition {
		return challenges.Condition{Name: name, Passed: measured <= target, Measured: measured, Target: target, Margin: target - measured, Unit: unit}
	}
	for _, tt := range []struct {
		name string
		ev   challenges.Evaluation
		want string
	}{
		{"fails", challenges.Evaluation{Conditions: []challenges.Condition{
			cond("latency", 540.7, 150, "ms"), cond("errors", 0.1031, 0.01, "ratio"),
			cond("cost", 0.644, 0.85, "$/h"), cond("resilience", 7.301, 1, "usage")}},
			"fails latency (540.7 ms against 150 ms); errors (10.3% against 1%); resilience (730% against 100%)"},
		{"structural", challenges.Evaluation{Conditions: []challenges.Condition{cond("latency", 50, 150, "ms")},
			Failures: []string{"lost_data:jobs"}},
			"fails structural failures: lost_data:jobs"},
		{"passes", challenges.Evaluation{Passed: true, Conditions: []challenges.Condition{
			cond("latency", 87.9, 150, "ms"), cond("cost", 0.808, 0.85, "$/h")}},
			"passes every condition; the tightest is cost, $0.042/h under its target of $0.85/h"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := DesignCheck{Evaluation: &tt.ev}
			c.describe()
			if c.Summary != tt.want || c.Passed != tt.ev.Passed {
				t.Errorf("summary %q (passed %v), want %q", c.Summary, c.Passed, tt.want)
			}
		})
	}
}
