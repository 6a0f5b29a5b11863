package challenges

import (
	"encoding/json"
	"fmt"
	"math"

	"backpressure/internal/sim"
)

// SurpriseID is the id of a duel's surprise chaos event.
const SurpriseID = "surprise"

// Surprise draws a duel's surprise chaos event from its seed: one of the
// level's own chaos events (its kind, target, duration and parameters),
// struck at another whole second, anywhere from the end of the warm-up to
// the last second that still leaves room for the level's recovery
// deadline, while the same failure is not already under way. A level without chaos (or without room) has no surprise: nil.
// The same level and seed always give the same event.
func Surprise(l *Level, seed uint64) []sim.ChaosEvent {
	if l == nil || l.c == nil || len(l.Run.Chaos) == 0 || l.Resilience == nil {
		return nil
	}
	rnd := splitmix(seed)
	tmpl := l.Run.Chaos[rnd.next()%uint64(len(l.Run.Chaos))]
	length := tmpl.DurationSec
	if tmpl.Kind == sim.ChaosCacheFlush {
		length = l.c.flushWarmup(l, tmpl)
	}
	lo := math.Ceil(l.WarmupSec())
	hi := math.Floor(l.Run.DurationSec - length - l.Resilience.RecoveryDeadlineSec - recoveryHoldSec)
	if hi < lo {
		return nil
	}
	// The seconds at which the same failure is not already under way
	// (the engine refuses a node failing twice at once, or an edge cut
	// twice): the surprise comes on top of the level's chaos.
	var slots []float64
	for at := lo; at <= hi; at++ {
		free := true
		for _, o := range l.Run.Chaos {
			same := o.Kind == tmpl.Kind && o.Target == tmpl.Target && o.From == tmpl.From && o.To == tmpl.To
			if same && at < o.AtSec+o.DurationSec && o.AtSec < at+length {
				free = false
			}
		}
		if free {
			slots = append(slots, at)
		}
	}
	if len(slots) == 0 {
		return nil
	}
	e := tmpl
	e.ID = SurpriseID
	e.AtSec = slots[rnd.next()%uint64(len(slots))]
	return []sim.ChaosEvent{e}
}

// WithChaos returns l with extra chaos events after its own, parsed and
// checked as a level (so the result runs exactly as a level published
// with that schedule would).
func WithChaos(l *Level, extra []sim.ChaosEvent) (*Level, error) {
	return WithHidden(l, extra, nil)
}

// WithHidden returns l with extra chaos events after its own run.chaos and,
// if resilience is not nil, that resilience rule in place of l's: the level
// an event's final runs (its hidden chaos and rule) or a duel (its surprise)
// are run against. The result is parsed and checked as a whole like any
// level, so a problem's path names the result's run.chaos or resilience.
func WithHidden(l *Level, extra []sim.ChaosEvent, resilience *Resilience) (*Level, error) {
	if l == nil || l.c == nil {
		return nil, ErrNotParsed
	}
	if len(extra) == 0 && resilience == nil {
		return l, nil
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("with hidden chaos: %w", err)
	}
	var doc Level
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("with hidden chaos: %w", err)
	}
	doc.Run.Chaos = append(doc.Run.Chaos, extra...)
	// The level's word on why its starting design fails is about the published schedule;
	// a surprise may well change it.
	doc.StartingFails = nil
	if resilience != nil {
		doc.Resilience = resilience
	}
	raw, err = json.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("with hidden chaos: %w", err)
	}
	return Parse(raw)
}

// splitmix is SplitMix64 (Steele, Lea and Flood 2014): a tiny,
// fully specified generator, so that a seed draws the same surprise on
// every build and platform.
type splitmixState struct{ x uint64 }

func splitmix(seed uint64) *splitmixState { return &splitmixState{x: seed} }

func (s *splitmixState) next() uint64 {
	s.x += 0x9e3779b97f4a7c15
	z := s.x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
