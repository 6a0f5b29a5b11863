package pgstore_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// The notice of a board change, built by the write in the database, is byte for byte
// what encoding/json makes of game.BoardChange.Notice for the change the store logged:
// whatever the player's name holds (characters json.Marshal escapes and PostgreSQL's
// to_json does not, control characters, quotes), whatever the time's precision, for a
// newcomer and for a player moving up.
func TestNoticeIsEncodingJSON(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	l, _, err := s.PutLevel(ctx, game.Level{Slug: "notice-level", Title: "N", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close(t.Context()) })
	if _, err := listener.Exec(ctx, "LISTEN "+pgstore.NoticeChannel); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		score int64
		at    time.Time
	}{
		{"plain", 10, t0},
		{"a<b>&c", 20, t0.Add(123456 * time.Microsecond)},
		{"quote\" back\\slash", 30, t0.Add(100 * time.Millisecond)},
		{"line\u2028para\u2029", 40, t0.Add(time.Second + 5*time.Microsecond)},
		{"ctl\x01\x1f\b\f\n\r\tend\x7f", 50, t0.Add(time.Minute)},
		{"Zoë 日本 🚀", 60, t0.Add(time.Hour + 999999*time.Microsecond)},
	}
	for i, tc := range tests {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("player-%d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		// Names reach the store validated; the encoding must hold for any text.
		if _, err := pgstore.Pool(s).Exec(ctx, `UPDATE players SET name = $2 WHERE id = $1`, p.ID, tc.name); err != nil {
			t.Fatal(err)
		}
		// A newcomer, then the same player moving up (a previous rank).
		for _, score := range []int64{tc.score, tc.score + 100} {
			sub := game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: l.Slug, Version: l.Version,
				Design: json.RawMessage(`{}`), Passed: true, Score: score, CreatedAt: tc.at}
			rec, err := s.CreateSubmission(ctx, sub, "", "")
			if err != nil {
				t.Fatal(err)
			}
			n, err := listener.WaitForNotification(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got game.Notice
			if err := json.Unmarshal([]byte(n.Payload), &got); err != nil {
				t.Fatalf("%q: payload %s: %v", tc.name, n.Payload, err)
			}
			changes, ok, err := s.BoardChanges(ctx, l.Slug, l.Version, got.Seq-1, 1)
			if err != nil || !ok || len(changes) != 1 {
				t.Fatalf("%q: BoardChanges after %d = %v, %v, %v", tc.name, got.Seq-1, changes, ok, err)
			}
			c := changes[0]
			if c.SubmissionID != sub.ID || c.Rank != rec.Rank || c.PlayerName != tc.name {
				t.Fatalf("%q: logged change %+v, want submission %v at rank %d", tc.name, c, sub.ID, rec.Rank)
			}
			want, err := c.Notice()
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if n.Payload != string(wantJSON) {
				t.Errorf("%q, score %d: notice\n got %s\nwant %s", tc.name, score, n.Payload, wantJSON)
			}
		}
	}
}

// The notice of an event attempt, built in the database, is byte for byte
// what encoding/json makes of game.EventChange.Notice with the entrant's
// standing as the standings then read: for a failed first attempt (no
// best), a passing one, and one that does not move the best, whatever the
// name and the time's precision.
func TestEventNoticeIsEncodingJSON(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "notice-event", Title: "N", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e, err := s.CreateEvent(ctx, game.Event{ID: uuid.Must(uuid.NewV7()), Slug: "notice-event", Version: 1, Title: "E",
		StartsAt: t0, EndsAt: t0.Add(24 * time.Hour), Final: game.FinalBest, HiddenChaos: json.RawMessage(`[]`), CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close(t.Context()) })
	if _, err := listener.Exec(ctx, "LISTEN "+pgstore.NoticeChannel); err != nil {
		t.Fatal(err)
	}
	names := []string{"plain", "a<b>&c", "quote\" back\\slash", "line\u2028para\u2029", "ctl\x01\x1f\b\f\n\r\tend\x7f", "Zoë 日本 🚀"}
	for i, name := range names {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("entrant-%d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pgstore.Pool(s).Exec(ctx, `UPDATE players SET name = $2 WHERE id = $1`, p.ID, name); err != nil {
			t.Fatal(err)
		}
		at := t0.Add(time.Duration(i)*time.Hour + time.Duration(i*123457)*time.Microsecond)
		for j, a := range []struct {
			passed bool
			score  int64
		}{{false, 7}, {true, int64(10 * i)}, {true, 0}} {
			sub := game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: p.ID,
				Design: json.RawMessage(`{}`), Passed: a.passed, Score: a.score, CreatedAt: at.Add(time.Duration(j) * time.Second)}
			if _, err := s.CreateEventSubmission(ctx, sub); err != nil {
				t.Fatal(err)
			}
			n, err := listener.WaitForNotification(ctx)
			if err != nil {
				t.Fatal(err)
			}
			page, err := s.EventStandingsPage(ctx, e.ID, game.EventStandingsQuery{Limit: 1, AroundPlayer: &p.ID})
			if err != nil || len(page.Entries) != 1 {
				t.Fatalf("standings around %q: %+v, %v", name, page, err)
			}
			want, err := game.EventChange{Seq: page.Seq, EventID: e.ID, Kind: game.EventAttempt,
				Standing: &page.Entries[0], Total: page.Total}.Notice()
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if n.Payload != string(wantJSON) {
				t.Errorf("%q, attempt %d: notice\n got %s\nwant %s", name, j, n.Payload, wantJSON)
			}
		}
	}
}
