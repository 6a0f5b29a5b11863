package reference

// The event list, the clock and the pools every component is built of.

import (
	"backpressure/internal/sim"
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// refOutcome is how one call ended for its caller.
type refOutcome uint8

const (
	refOK       refOutcome = iota
	refRejected            // a full waiting room or a full queue
	refErrored             // a failed node, a cut edge, no healthy backend
)

// refEvent is one thing that will happen; seq breaks ties so that runs are reproducible.
type refEvent struct {
	at  float64
	seq uint64
	fn  func()
}

// refEvents is a binary min-heap of events by time, then by seq.
type refEvents []refEvent

func (h refEvents) before(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *refEvents) push(e refEvent) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.before(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *refEvents) pop() refEvent {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = refEvent{}
	q = q[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q.before(l, small) {
			small = l
		}
		if r < len(q) && q.before(r, small) {
			small = r
		}
		if small == i {
			break
		}
		q[i], q[small] = q[small], q[i]
		i = small
	}
	*h = q
	return top
}

// refSim is the clock, the event list and the random source of one run.
type refSim struct {
	now    float64
	seq    uint64
	events refEvents
	rng    *rand.Rand
}

func newRefSim(seed uint64) *refSim {
	return &refSim{rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// at schedules fn at time t (never in the past).
func (s *refSim) at(t float64, fn func()) {
	s.seq++
	s.events.push(refEvent{at: math.Max(t, s.now), seq: s.seq, fn: fn})
}

// runUntil processes every event before end.
func (s *refSim) runUntil(end float64) {
	for len(s.events) > 0 && s.events[0].at < end {
		e := s.events.pop()
		s.now = e.at
		e.fn()
	}
	s.now = end
}

func (s *refSim) exp(mean float64) float64 { return s.rng.ExpFloat64() * mean }

// refJob is one request inside one pool.
type refJob struct {
	req     *refReq // the client's attempt it serves (nil: a queue's or a replica's own work)
	id      uint64
	slot    int // its index in the pool's inService while served
	arrived float64
	epoch   int // the pool's epoch when it arrived: a failure starts a new one
	// start runs when the job's service ends; it must call release once the worker is free
	// (at once for a pool that does not hold, after the downstream answer for one that does).
	start func(release func())
	fail  func(refOutcome)
	done  bool
	// service is the job's own mean service time, if not the pool's (a replica's replay).
	service float64
}

// refPool is a FIFO pool of workers with exponential service and a finite waiting room.
type refPool struct {
	s          *refSim
	name       string
	comp       string // the component it belongs to
	workers    int
	serviceSec float64
	buffer     int // waiting places; -1 for unbounded
	durable    bool

	busy    int
	waiting []*refJob
	// busyInt is busy × time integrated up to busyAt: the worker-seconds spent busy.
	busyInt, busyAt float64
	inSvc           []*refJob // in service (or holding their worker), for a failure to fail them
	failed          bool
	epoch           int

	// What happened, for the tests: sojourn times (arrival to release) and counts.
	sojourn    []float64
	keepSojurn bool
	served     int
	rejected   int
	maxWaiting int
}

func newRefPool(s *refSim, name string, workers int, serviceSec float64, buffer int) *refPool {
	comp, _, _ := strings.Cut(name, "/")
	return &refPool{s: s, name: name, comp: comp, workers: workers, serviceSec: serviceSec, buffer: buffer}
}

func (p *refPool) hasRoom() bool {
	return !p.failed && (p.busy < p.workers || p.buffer < 0 || len(p.waiting) < p.buffer)
}

// arrive admits a job: a free worker takes it, else it waits, else it is rejected.
func (p *refPool) arrive(j *refJob) {
	p.s.seq++
	j.id, j.arrived, j.epoch = p.s.seq, p.s.now, p.epoch
	switch {
	case p.failed:
		j.done = true
		p.lose(j, sim.CauseNodeFailed)
		j.fail(refErrored)
	case p.busy < p.workers:
		p.begin(j)
	case p.buffer < 0 || len(p.waiting) < p.buffer:
		p.waiting = append(p.waiting, j)
		p.maxWaiting = max(p.maxWaiting, len(p.waiting))
		if j.req != nil && j.req.loss != nil {
			j.req.loss.waiting = p
		}
	default:
		p.rejected++
		j.done = true
		p.lose(j, sim.CauseSaturated)
		j.fail(refRejected)
	}
}

// requeue puts a job back at the tail whatever the waiting room holds (a queue's message
// whose write failed: the message was already stored).
func (p *refPool) requeue(j *refJob) {
	j.arrived, j.epoch, j.done = p.s.now, p.epoch, false
	if p.busy < p.workers && !p.failed {
		p.begin(j)
		return
	}
	p.waiting = append(p.waiting, j)
}

// setBusy changes the busy workers, integrating the busy time up to now first.
func (p *refPool) setBusy(n int) {
	p.busyInt += float64(p.busy) * (p.s.now - p.busyAt)
	p.busyAt, p.busy = p.s.now, n
}

// busySeconds is the worker-seconds the pool has spent busy up to now.
func (p *refPool) busySeconds() float64 {
	return p.busyInt + float64(p.busy)*(p.s.now-p.busyAt)
}

// lose records that j's attempt was lost here.
func (p *refPool) lose(j *refJob, cause sim.Cause) {
	if j.req != nil {
		j.req.lose(p.comp, cause)
	}
}

func (p *refPool) begin(j *refJob) {
	if j.req != nil && j.req.loss != nil {
		if j.req.loss.waiting == p {
			j.req.loss.waiting = nil
		}
		j.req.loss.at = p.comp
	}
	p.setBusy(p.busy + 1)
	j.slot = len(p.inSvc)
	p.inSvc = append(p.inSvc, j)
	epoch := p.epoch
	mean := p.serviceSec
	if j.service > 0 {
		mean = j.service
	}
	p.s.at(p.s.now+p.s.exp(mean), func() {
		if j.done || epoch != p.epoch {
			return // failed with its node
		}
		released := false
		j.start(func() {
			if released || epoch != p.epoch {
				return
			}
			released = true
			p.leave(j)
			p.served++
			if p.keepSojurn {
				p.sojourn = append(p.sojourn, p.s.now-j.arrived)
			}
			p.setBusy(p.busy - 1)
			p.next()
		})
	})
}

// leave takes j out of the in-service set (swap with the last).
func (p *refPool) leave(j *refJob) {
	last := p.inSvc[len(p.inSvc)-1]
	p.inSvc[j.slot], last.slot = last, j.slot
	p.inSvc = p.inSvc[:len(p.inSvc)-1]
}

func (p *refPool) next() {
	for p.busy < p.workers && len(p.waiting) > 0 && !p.failed {
		j := p.waiting[0]
		p.waiting = p.waiting[1:]
		p.begin(j)
	}
}

// fail stops the pool: everything in service fails, and what waits fails too unless the
// pool is durable (a queue's messages survive).
func (p *refPool) fail() {
	p.failed = true
	p.epoch++
	p.setBusy(0)
	inSvc := p.inSvc
	// Fail them in the order they arrived, whatever order the swaps left.
	slices.SortFunc(inSvc, func(a, b *refJob) int { return cmp.Compare(a.id, b.id) })
	p.inSvc = nil
	for _, j := range inSvc {
		j.done = true
		p.lose(j, sim.CauseNodeFailed)
		j.fail(refErrored)
	}
	if !p.durable {
		w := p.waiting
		p.waiting = nil
		for _, j := range w {
			j.done = true
			p.lose(j, sim.CauseNodeFailed)
			j.fail(refErrored)
		}
	}
}

func (p *refPool) recover() {
	p.failed = false
	for _, j := range p.waiting {
		j.epoch = p.epoch
	}
	p.next()
}
