package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// announcedEvent is an event on a fresh database with a listener on the
// notice channel, and n players.
func announcedEvent(t *testing.T, n int) (url string, s *pgstore.Store, e game.Event, ps []game.Player, listener *pgx.Conn) {
	t.Helper()
	url = pgtest.NewDatabase(t)
	ctx := t.Context()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "announced", Title: "A", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e, err = s.CreateEvent(ctx, game.Event{ID: uuid.Must(uuid.NewV7()), Slug: "announced", Version: 1, Title: "E",
		StartsAt: t0, EndsAt: t0.Add(time.Hour), Final: game.FinalBest, HiddenChaos: json.RawMessage(`[]`), CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("crowd-%03d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	listener, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close(context.WithoutCancel(ctx)) })
	if _, err := listener.Exec(ctx, "LISTEN "+pgstore.NoticeChannel); err != nil {
		t.Fatal(err)
	}
	return url, s, e, ps, listener
}

// attemptsAtOnce makes each player attempt each times, all at once.
func attemptsAtOnce(t *testing.T, s *pgstore.Store, e game.Event, ps []game.Player, each int) {
	t.Helper()
	var wg sync.WaitGroup
	for i, p := range ps {
		for j := range each {
			wg.Go(func() {
				sub := game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: p.ID,
					Design: json.RawMessage(`{}`), Passed: (i+j)%3 != 0, Score: int64((i*7 + j) % 11),
					CreatedAt: e.StartsAt.Add(time.Duration(i*each+j) * time.Millisecond)}
				if _, err := s.CreateEventSubmission(t.Context(), sub); err != nil {
					t.Errorf("attempt: %v", err)
				}
			})
		}
	}
	wg.Wait()
}

// notices reads n notices, or fails after the timeout.
func notices(t *testing.T, listener *pgx.Conn, n int) []game.Notice {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out []game.Notice
	for len(out) < n {
		m, err := listener.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("after %d of %d notices: %v", len(out), n, err)
		}
		var got game.Notice
		if err := json.Unmarshal([]byte(m.Payload), &got); err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// Attempts racing on one event are each announced once, by the announcer on
// its own, numbered 1, 2, 3 … in the order the notices arrive, and the last
// change counts every entrant.
func TestAnnouncerNumbersEveryAttemptOnce(t *testing.T) {
	t.Parallel()
	const players, each = 40, 3
	_, s, e, ps, listener := announcedEvent(t, players)
	attemptsAtOnce(t, s, e, ps, each)
	got := notices(t, listener, players*each)
	for i, n := range got {
		var change game.EventChange
		if err := json.Unmarshal(n.Data, &change); err != nil {
			t.Fatal(err)
		}
		if n.Seq != int64(i+1) || change.Seq != n.Seq || change.Kind != game.EventAttempt {
			t.Fatalf("notice %d: seq %d (change %d, %s), want %d", i, n.Seq, change.Seq, change.Kind, i+1)
		}
		if change.Standing == nil || change.Standing.Rank < 1 || change.Standing.Rank > players {
			t.Fatalf("notice %d: standing %+v", i, change.Standing)
		}
		if i == len(got)-1 && change.Total != players {
			t.Errorf("last change: total %d, want %d", change.Total, players)
		}
	}
	if n, err := s.AnnounceEvents(t.Context()); err != nil || n != 0 {
		t.Errorf("AnnounceEvents after the announcer: %d, %v; want nothing left", n, err)
	}
	page, err := s.EventStandingsPage(t.Context(), e.ID, game.EventStandingsQuery{Limit: 1})
	if err != nil || page.Seq != players*each || page.Total != players {
		t.Errorf("standings: seq %d total %d, %v; want %d and %d", page.Seq, page.Total, err, players*each, players)
	}
}

// Attempts whose replica stopped before announcing them are numbered by the
// finish, before its final change.
func TestFinishAnnouncesWhatIsLeft(t *testing.T) {
	t.Parallel()
	const players = 12
	url, s, e, ps, listener := announcedEvent(t, players)
	attemptsAtOnce(t, s, e, ps, 1)
	s.Close() // at once: within the announcer's delay
	finisher, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(finisher.Close)
	finals, err := finisher.EventFinals(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var results []game.EventResult
	for _, sub := range finals {
		results = append(results, game.EventResult{PlayerID: sub.PlayerID, SubmissionID: sub.ID, Passed: sub.Passed,
			Score: sub.Score, Result: json.RawMessage(`{}`)})
	}
	if done, err := finisher.FinishEvent(t.Context(), e.ID, results, e.EndsAt); err != nil || !done {
		t.Fatalf("FinishEvent: %v, %v", done, err)
	}
	got := notices(t, listener, players+1)
	for i, n := range got {
		var change game.EventChange
		if err := json.Unmarshal(n.Data, &change); err != nil {
			t.Fatal(err)
		}
		want := game.EventAttempt
		if i == players {
			want = game.EventFinal
		}
		if n.Seq != int64(i+1) || change.Kind != want {
			t.Errorf("notice %d: seq %d kind %s, want %d %s", i, n.Seq, change.Kind, i+1, want)
		}
	}
}
