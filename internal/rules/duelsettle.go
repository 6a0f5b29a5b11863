package rules

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

// settleDuel ends duel id if it is due: a challenge or match request past
// accept_by expires; an active duel with both designs in is run and
// decided at once; past submit_by, a duel with one design is forfeited to
// its submitter and one with none expires. Safe to call any number of
// times, from any replica, at once: the runs are deterministic and the
// store ends a duel exactly once (settled reports whether this call did).
// A duel not yet due is returned unchanged. Its runs take the background
// workers through bg: at once (Scheduler.Background) in the request that
// brought the second design, deferred (settleDeferred) by the jobs.
func (s *Service) settleDuel(ctx context.Context, bg backgroundRunner, id uuid.UUID) (game.Duel, bool, error) {
	d, err := s.store.Duel(ctx, id)
	if err != nil || game.DuelEnded(d.State) {
		return d, false, err
	}
	now := s.DeadlineClock(ctx)
	in := 0
	for _, side := range d.Sides {
		if side.Submitted() {
			in++
		}
	}
	due := !now.Before(d.Deadline())
	var end game.DuelEnd
	switch {
	case d.State == game.DuelActive && in == 2:
		if end, err = s.decideDuel(ctx, bg, d); err != nil {
			return d, false, err
		}
	case !due:
		return d, false, nil
	case d.State == game.DuelChallenged:
		end = game.DuelEnd{State: game.DuelExpired, Result: game.DuelResult{Reason: game.ReasonUnanswered}}
	case d.State == game.DuelMatching:
		end = game.DuelEnd{State: game.DuelExpired, Result: game.DuelResult{Reason: game.ReasonUnmatched}}
	case in == 0:
		end = game.DuelEnd{State: game.DuelExpired, Result: game.DuelResult{Reason: game.ReasonNoDesigns}}
	default:
		end = s.forfeitDuel(ctx, d)
	}
	end.At = now
	if end.Result.Sides == nil {
		end.Result.Sides = []game.DuelResultSide{}
	}
	if end.Result.Surprise == nil {
		end.Result.Surprise = s.surpriseOf(ctx, d)
	}
	out, done, err := s.store.EndDuel(ctx, d.ID, end)
	if err == nil && done {
		s.log.InfoContext(ctx, "duel ended", "duel_id", d.ID.String(), "state", out.State, "reason", end.Result.Reason)
	}
	return out, done, err
}

// backgroundRunner runs a job of the server's own on the scheduler's
// workers of kind: Scheduler.Background, or settleDeferred.
type backgroundRunner func(ctx context.Context, kind string, fn func(ctx context.Context) error) error

// settleDeferred is how a job settles a duel: each run gives way to the
// duels being settled in their players' requests (Scheduler.Deferred), so a
// burst of duels left to jobs never delays another player's. Given no
// worker within a second, the job is busy and tries again.
func (s *Service) settleDeferred(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	return s.sched.Deferred(ctx, kind, time.Second, fn)
}

// surpriseOf is d's surprise chaos as JSON (a level's run.chaos list).
func (s *Service) surpriseOf(ctx context.Context, d game.Duel) json.RawMessage {
	_, l, err := s.Level(ctx, d.Slug, d.Version)
	if err != nil {
		return json.RawMessage("[]")
	}
	return surpriseJSON(challenges.Surprise(l, d.Seed))
}

func surpriseJSON(events []sim.ChaosEvent) json.RawMessage {
	if events == nil {
		events = []sim.ChaosEvent{}
	}
	b, err := json.Marshal(events)
	if err != nil {
		return json.RawMessage("[]")
	}
	return b
}

// forfeitDuel: the side that submitted wins; its design is shown, not run.
func (s *Service) forfeitDuel(ctx context.Context, d game.Duel) game.DuelEnd {
	res := game.DuelResult{Reason: game.ReasonForfeit}
	for _, side := range d.Sides {
		rs := game.DuelResultSide{PlayerID: side.PlayerID, Submitted: side.Submitted(), Design: orNull(side.Design),
			Summary: json.RawMessage("null"), Evaluation: json.RawMessage("null"), Components: json.RawMessage("null"), Ticks: json.RawMessage("null")}
		if side.Submitted() {
			w := side.PlayerID
			res.Winner = &w
		}
		res.Sides = append(res.Sides, rs)
	}
	return game.DuelEnd{State: game.DuelForfeited, Result: res}
}

// decideDuel runs both designs against the level with the surprise, on
// the background workers (never the submissions') through bg, and decides.
func (s *Service) decideDuel(ctx context.Context, bg backgroundRunner, d game.Duel) (game.DuelEnd, error) {
	_, l, err := s.Level(ctx, d.Slug, d.Version)
	if err != nil {
		return game.DuelEnd{}, err
	}
	surprise := challenges.Surprise(l, d.Seed)
	var full *challenges.Level
	parseCtx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	if err := bg(parseCtx, scheduler.KindEvent, func(context.Context) error {
		full, err = challenges.WithChaos(l, surprise)
		return err
	}); err != nil {
		return game.DuelEnd{}, err
	}
	res := game.DuelResult{Surprise: surpriseJSON(surprise)}
	var runs [2]game.DuelRun
	for i, side := range d.Sides {
		rs, err := s.duelRun(ctx, bg, full, side)
		if err != nil {
			return game.DuelEnd{}, err
		}
		runs[i] = rs.DuelRun
		res.Sides = append(res.Sides, rs)
	}
	winner, reason := game.DecideDuel(runs[0], runs[1])
	res.Reason, res.Draw = reason, winner < 0
	if winner >= 0 {
		w := d.Sides[winner].PlayerID
		res.Winner = &w
	}
	return game.DuelEnd{State: game.DuelFinished, Result: res}, nil
}

func (s *Service) duelRun(ctx context.Context, bg backgroundRunner, full *challenges.Level, side game.DuelSide) (game.DuelResultSide, error) {
	rs := game.DuelResultSide{PlayerID: side.PlayerID, Submitted: true, Design: side.Design}
	d, _, err := ParseDesign(side.Design)
	var ev *challenges.Evaluation
	if err == nil {
		ev, err = s.evaluateBackground(ctx, bg, full.Evaluate, d) // its timeline is shown
	}
	rs, err = sideFrom(rs, ev, err)
	full.Release(ev) // sideFrom keeps its timeline as JSON of its own
	return rs, err
}

// sideFrom fills a result side from its run; a design the full level
// refuses fails from the start with every request an error.
func sideFrom(rs game.DuelResultSide, ev *challenges.Evaluation, err error) (game.DuelResultSide, error) {
	null := json.RawMessage("null")
	rs.Summary, rs.Evaluation, rs.Components, rs.Ticks = null, null, null, null
	if err != nil {
		if game.ErrorCode(err) != game.EINVALID {
			return rs, err
		}
		zero := 0.0
		rs.DuelRun = game.DuelRun{FailedAtSec: &zero, ErrorRate: 1}
		rs.Evaluation, err = json.Marshal(map[string]any{"passed": false, "error": game.ErrorMessage(err), "errors": game.ErrorFields(err)})
		return rs, err
	}
	rs.DuelRun = duelRunOf(ev)
	if rs.Evaluation, err = json.Marshal(ev); err != nil {
		return rs, err
	}
	// The timeline kept is at most duelMaxPoints ticks and duelMaxTicksBytes of JSON:
	// a design of many components keeps fewer ticks, so that what a duel stores is
	// bounded whatever its designs.
	for points := duelMaxPoints; ; points /= 2 {
		res, every := Downsample(ev.Result, points)
		rs.Every, rs.TotalTicks = every, len(ev.Result.Ticks)
		if rs.Summary, err = json.Marshal(res.Summary); err != nil {
			return rs, err
		}
		if rs.Components, err = json.Marshal(res.Components); err != nil {
			return rs, err
		}
		if rs.Ticks, err = json.Marshal(res.Ticks); err != nil || len(rs.Ticks) <= duelMaxTicksBytes || points <= 2 {
			return rs, err
		}
	}
}

// duelMaxTicksBytes bounds the JSON of the timeline a duel stores of each side's run.
const duelMaxTicksBytes = 512 << 10

// duelRunOf measures a run for the decision: a failing run failed from its
// first failing stretch, or (failing on something measured over the whole
// window, like cost) from the start of the evaluation window.
func duelRunOf(ev *challenges.Evaluation) game.DuelRun {
	r := game.DuelRun{Passed: ev.Passed, Score: challenges.Score(ev)}
	for _, c := range ev.Conditions {
		if c.Name == challenges.CondErrors {
			r.ErrorRate = c.Measured
		}
	}
	if !ev.Passed {
		at := ev.Window.StartSec
		if len(ev.Why) > 0 {
			at = ev.Why[0].StartSec
		}
		r.FailedAtSec = &at
	}
	return r
}
