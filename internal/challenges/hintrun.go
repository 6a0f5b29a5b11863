package challenges

import (
	"context"
	"errors"
	"sync"
	"unsafe"

	"backpressure/internal/sim"
)

// Setting a run aside. Until a batch passes, the search cannot know whether a failing
// candidate's violation will be wanted: it is only if no batch ever passes, when the
// closest candidate is reported. So a candidate's run that has certainly failed (its floor
// is above 0) is not finished but set aside where it stands, its goroutine waiting in the
// engine's Stop hook. If a later batch passes, the runs set aside are ended unfinished;
// if none does, they are taken up again in the order of the search, each ending as soon as
// it cannot beat the closest so far, and the closest is the one the full runs would have
// named. The runs set aside together hold at most maxSetAside bytes of results; beyond
// that a run goes on at once, ending when it cannot beat what the search knows.
const maxSetAside = 64 << 20

// candRun is one candidate's run.
type candRun struct {
	p    *sim.Prepared
	held chan struct{}           // the run was set aside
	wake chan func(float64) bool // nil: end it; else go on, ending when it says so
	fin  chan struct{}           // the run ended
	// Written by the run's goroutine, read after fin (or held):
	ev            *Evaluation
	err           error // errStopped for a run ended early
	ticks, reused int
	aside         bool // set aside and not yet woken
	heldAt        int  // the tick it was set aside after
	size          int64
}

// setAside is the runs set aside and the bytes they hold.
type setAside struct {
	mu    sync.Mutex
	limit int64 // maxSetAside
	bytes int64
}

func (s *setAside) take(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+n > s.limit {
		return false
	}
	s.bytes += n
	return true
}

func (s *setAside) give(n int64) {
	s.mu.Lock()
	s.bytes -= n
	s.mu.Unlock()
}

// scratches are the memory the search lends its runs (sim.Scratch): each run has one of
// its own while it lives, a run set aside included, and gives it back when it ends.
type scratches struct {
	mu   sync.Mutex
	free []*sim.Scratch
}

func (s *scratches) get() *sim.Scratch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		sc := s.free[n-1]
		s.free = s.free[:n-1]
		return sc
	}
	return new(sim.Scratch)
}

func (s *scratches) put(sc *sim.Scratch) {
	s.mu.Lock()
	s.free = append(s.free, sc)
	s.mu.Unlock()
}

// start runs the candidate until it ends or is set aside, yielding through y as it goes.
// moot says whether a floor of its
// violation means it can no longer matter, when it cannot be set aside.
func (r *candRun) start(ctx context.Context, l *Level, s *setAside, mem *scratches, y *runYield, moot func(floor float64) bool) {
	r.held, r.fin = make(chan struct{}, 1), make(chan struct{})
	r.wake = make(chan func(float64) bool)
	var floor *violationBound
	mayHold := true
	go func() {
		defer close(r.fin)
		sc := mem.get()
		defer mem.put(sc)
		// A candidate's verdict is all the search reads: no display-only figures.
		ev, err := l.runWith(ctx, r.p, sim.RunOptions{Points: -1, Scratch: sc, Stop: func(res *sim.Result, t int) bool {
			y.tick()
			if floor == nil {
				floor = newViolationBound(l, res)
			}
			r.ticks = t + 1
			v := floor.add(res, t)
			if v <= 0 {
				return false
			}
			if mayHold {
				mayHold = false
				size := int64(len(res.Ticks)) * (int64(unsafe.Sizeof(sim.Tick{})) +
					int64(len(res.Components))*int64(unsafe.Sizeof(sim.ComponentTick{})))
				if s.take(size) {
					r.size, r.aside, r.heldAt = size, true, t
					r.held <- struct{}{}
					next := <-r.wake
					s.give(size)
					if next == nil {
						return true
					}
					moot = next
				}
			}
			return moot(v)
		}})
		r.reused = r.p.Reused()
		if err == nil {
			// The search reads a candidate's verdict, never its result again: the next run
			// lent the Scratch makes its own in the same memory.
			sc.Recycle(ev.Result)
			ev.Result = nil
		}
		if errors.Is(err, sim.ErrStopped) {
			err = errStopped
		}
		r.ev, r.err = ev, err
	}()
	select {
	case <-r.held:
	case <-r.fin:
	}
}

// resume takes a run set aside up again, ending it once moot says so, and waits for its end.
func (r *candRun) resume(moot func(floor float64) bool) {
	r.aside = false
	r.wake <- moot
	<-r.fin
}

// end ends a run set aside unfinished and waits for it.
func (r *candRun) end() {
	if r.aside {
		r.aside = false
		r.wake <- nil
		<-r.fin
	}
}
