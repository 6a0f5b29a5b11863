package live_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/live"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// Two listeners (two replicas) on one database both receive a change
// committed through the store, and neither receives what a rolled-back
// transaction sent.
func TestListenAcrossConnections(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _, err := st.PutLevel(ctx, game.Level{Slug: "lvl", Title: "L", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	topic := game.BoardTopic("lvl", l.Version)
	connect := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }
	var subs []*live.Subscription
	done := make(chan error, 2)
	for range 2 {
		b := live.NewBroker()
		s, _ := b.Subscribe(topic, 8)
		subs = append(subs, s)
		go func() { done <- live.Listen(ctx, b, pgstore.NoticeChannel, connect, slog.New(slog.DiscardHandler)) }()
	}
	for i, s := range subs {
		select {
		case <-s.Resync: // the listener is connected and listening
		case <-time.After(30 * time.Second):
			t.Fatalf("listener %d did not connect", i)
		}
	}

	// Sent and rolled back: never delivered.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, pgstore.NoticeChannel, `{"topic":"`+topic+`","seq":99,"data":null}`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	_, hash := game.NewToken()
	p, err := st.CreatePlayer(ctx, "ada", game.RolePlayer, hash)
	if err != nil {
		t.Fatal(err)
	}
	sub := game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: "lvl", Version: l.Version,
		Design: json.RawMessage(`{}`), Passed: true, Score: 42, CreatedAt: time.Now()}
	if _, err := st.CreateSubmission(ctx, sub, "", ""); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs {
		select {
		case n := <-s.C:
			var c game.BoardChange
			if err := json.Unmarshal(n.Data, &c); err != nil || n.Seq != 1 || c.SubmissionID != sub.ID || c.Rank != 1 {
				t.Errorf("listener %d received %+v (%v), want change 1 of the submission", i, n, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("listener %d received nothing", i)
		}
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("Listen returned %v after cancellation", err)
		}
	}
}
