package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// RunOptions.Stop sees every tick as the finished run reports it, changes nothing when it
// never stops the run, and ends the run, with ErrStopped, at the tick it says.
func TestRunStop(t *testing.T) {
	cases := goldenCases()
	for _, name := range []string{"random/1", "random/2/constant", "random/7", "random/11/constant"} {
		d, cfg := cases[name]()
		run := func(o RunOptions) (*Result, error) { return prepareAndRun(t, d, cfg, o) }
		plain, err := run(RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var seen [][]byte
		watched, err := run(RunOptions{Stop: func(res *Result, k int) bool {
			if len(res.Components) != len(plain.Components) || len(res.Ticks) != len(plain.Ticks) {
				t.Fatalf("%s: tick %d: the result so far has %d components and %d ticks", name, k, len(res.Components), len(res.Ticks))
			}
			seen = append(seen, encodeTick(t, res.Ticks[k]))
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encode(t, plain), encode(t, watched)) {
			t.Errorf("%s: a run watched by Stop differs from the plain run", name)
		}
		if len(seen) != len(plain.Ticks) {
			t.Fatalf("%s: Stop saw %d ticks of %d", name, len(seen), len(plain.Ticks))
		}
		for k, b := range seen {
			if !bytes.Equal(b, encodeTick(t, plain.Ticks[k])) {
				t.Errorf("%s: tick %d as Stop saw it differs from the finished run's", name, k)
				break
			}
		}
		for _, at := range []int{0, len(plain.Ticks) / 2, len(plain.Ticks) - 1} {
			calls := 0
			res, err := run(RunOptions{Stop: func(_ *Result, k int) bool { calls++; return k == at }})
			if res != nil || !errors.Is(err, ErrStopped) || calls != at+1 {
				t.Errorf("%s: stopped at tick %d: result %v, error %v, %d calls", name, at, res != nil, err, calls)
			}
		}
	}
}

func encodeTick(t *testing.T, tk Tick) []byte {
	b, err := json.Marshal(tk)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A Scratch carries memory from run to run, never a number: each run lent the buffers and
// records its predecessors left (larger designs and smaller, cycling and not, some stopped
// partway, some finished and recycled) reports what it reports alone, and the Scratch comes
// back holding buffers to lend.
func TestScratchChangesNothing(t *testing.T) {
	cases := goldenCases()
	// Designs whose runs check ticks for reuse, and so take buffers: a function that refuses
	// invocations or starts instances in every tick names the time and is never checked.
	names := []string{"random/22", "random/8/constant", "random/6", "random/11/constant", "random/22"}
	sc := &Scratch{}
	for i, name := range names {
		d, cfg := cases[name]()
		run := func(o RunOptions) (*Result, error) { return prepareAndRun(t, d, cfg, o) }
		plain, err := run(RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // a run that ends early gives its buffers back too
			if _, err := run(RunOptions{Scratch: sc, Stop: func(_ *Result, k int) bool { return k == len(plain.Ticks)/2 }}); !errors.Is(err, ErrStopped) {
				t.Fatalf("%s: stopped run: %v", name, err)
			}
		}
		lent, err := run(RunOptions{Scratch: sc})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encode(t, plain), encode(t, lent)) {
			t.Errorf("%s (run %d): a run in lent memory differs from the plain run", name, i)
		}
		if len(sc.states) == 0 {
			t.Errorf("%s (run %d): the run gave no buffers back", name, i)
		}
		if i%2 == 0 { // a finished run's records, given back, are the next run's
			sc.Recycle(lent)
			if lent.Ticks != nil || sc.ticks == nil {
				t.Errorf("%s (run %d): the result's records were not taken back", name, i)
			}
		}
	}
}

// prepareAndRun prepares d under cfg, failing the test if it cannot, and runs it with o.
func prepareAndRun(t *testing.T, d Design, cfg Config, o RunOptions) (*Result, error) {
	t.Helper()
	p, err := Prepare(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p.RunWith(context.Background(), o)
}
