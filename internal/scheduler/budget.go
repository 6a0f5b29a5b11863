package scheduler

import (
	"math"
	"sync"
	"time"
)

// budget is a token bucket of simulation cost units (path-ticks, sim.Cost) per player or
// client address: each run is charged its cost, known before it starts, and the bucket
// refills at a steady rate up to its burst. A run the bucket cannot pay for is refused
// with the time until it could. Time comes from the server's clock, so tests can move it.
type budget struct {
	burst float64
	rate  float64 // units per second
	now   func() time.Time
	mu    sync.Mutex
	byKey map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBudgetKeys bounds the buckets kept; past it, full buckets (which hold nothing a
// newcomer would not get) are forgotten.
const maxBudgetKeys = 100_000

func newBudget(burst, perSecond int64, now func() time.Time) *budget {
	return &budget{burst: float64(burst), rate: float64(perSecond), now: now, byKey: map[string]*bucket{}}
}

// charge takes cost units from key's bucket, or says how long until it could.
func (b *budget) charge(key string, cost int64) (ok bool, wait time.Duration) {
	if b == nil || b.rate <= 0 {
		return true, 0
	}
	c := math.Min(float64(cost), b.burst) // a run larger than the burst waits for a full bucket
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	bk := b.byKey[key]
	if bk == nil {
		if len(b.byKey) >= maxBudgetKeys {
			b.forgetFull(now)
		}
		bk = &bucket{tokens: b.burst, at: now}
		b.byKey[key] = bk
	}
	if dt := now.Sub(bk.at).Seconds(); dt > 0 {
		bk.tokens = math.Min(b.burst, bk.tokens+dt*b.rate)
		bk.at = now
	}
	if bk.tokens >= c {
		bk.tokens -= c
		return true, 0
	}
	return false, time.Duration((c - bk.tokens) / b.rate * float64(time.Second))
}

// refund gives back units charged for a run that never started.
func (b *budget) refund(key string, cost int64) {
	if b == nil || b.rate <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if bk := b.byKey[key]; bk != nil {
		bk.tokens = math.Min(b.burst, bk.tokens+math.Min(float64(cost), b.burst))
	}
}

func (b *budget) forgetFull(now time.Time) {
	for k, bk := range b.byKey {
		if bk.tokens+now.Sub(bk.at).Seconds()*b.rate >= b.burst {
			delete(b.byKey, k)
		}
	}
	if len(b.byKey) >= maxBudgetKeys {
		// Everyone is in debt: forgetting the oldest is the least unfair choice.
		var oldest string
		var at time.Time
		for k, bk := range b.byKey {
			if oldest == "" || bk.at.Before(at) {
				oldest, at = k, bk.at
			}
		}
		delete(b.byKey, oldest)
	}
}
