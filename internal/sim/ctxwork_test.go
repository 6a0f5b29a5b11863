package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// countingContext is never done; it counts how often a run asks.
type countingContext struct {
	context.Context
	asked int
	after int // once asked this many times, it reports cancellation
}

func (c *countingContext) Err() error {
	c.asked++
	if c.after > 0 && c.asked >= c.after {
		return context.Canceled
	}
	return nil
}

// layered is a design of a gateway in front of n apps, each calling each of n more apps,
// each calling each of n databases: n³ request paths a class.
func layered(t *testing.T, n int) Design {
	comps := []string{`{"id":"gw","type":"load_balancer"}`}
	var edges []string
	for i := range n {
		comps = append(comps, fmt.Sprintf(`{"id":"a%d","type":"app_service"}`, i), fmt.Sprintf(`{"id":"b%d","type":"app_service"}`, i),
			fmt.Sprintf(`{"id":"db%d","type":"database"}`, i))
		edges = append(edges, fmt.Sprintf(`{"from":"gw","to":"a%d"}`, i))
		for j := range n {
			edges = append(edges, fmt.Sprintf(`{"from":"a%d","to":"b%d"}`, i, j), fmt.Sprintf(`{"from":"b%d","to":"db%d"}`, i, j))
		}
	}
	return mustDesign(t, `{"components":[`+strings.Join(comps, ",")+`],"edges":[`+strings.Join(edges, ",")+`]}`)
}

// A run looks at its context after every ctxCheckWork units of work, whatever the shape of
// its work: before every tick of a run of heavy ticks, every so many ticks of a light one,
// so a cancelled run of heavy ticks (610 ticks of 8,188 paths) stops at its next tick.
func TestRunLooksAtItsContextByWorkDone(t *testing.T) {
	for _, tt := range []struct {
		name    string
		d       Design
		seconds float64
		heavy   bool
	}{
		{"few heavy ticks", layered(t, 12), 6, true},
		{"many light ticks", layered(t, 1), 300, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := constant(100, tt.seconds)
			p, err := Prepare(tt.d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := &countingContext{Context: context.Background()}
			if _, err := p.Run(ctx); err != nil {
				t.Fatal(err)
			}
			nt, tw := p.m.v.ticks, p.m.tickWork()
			every := (ctxCheckWork + tw - 1) / tw // ticks between looks
			if want := (nt + every - 1) / every; ctx.asked != want {
				t.Errorf("looked %d times over %d ticks of %d units; want one look per %d units, %d", ctx.asked, nt, tw, ctxCheckWork, want)
			}
			if tt.heavy != (every == 1) {
				t.Errorf("%d units a tick: the case does not test what it names", tw)
			}

			// Cancelled after its first look, the run stops at its next one.
			q, _ := Prepare(tt.d, cfg)
			stop := &countingContext{Context: context.Background(), after: 2}
			if res, err := q.Run(stop); err != context.Canceled || res != nil || stop.asked != 2 {
				t.Errorf("cancelled run = %v, %v after %d looks; want context.Canceled at the second", res != nil, err, stop.asked)
			}
		})
	}
}
