package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/live"
	"backpressure/internal/store/memstore"
)

func notice(topic string, seq int64) game.Notice {
	return game.Notice{Topic: topic, Seq: seq, Data: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, seq))}
}

// receive takes what is buffered on s without waiting.
func receive(s *live.Subscription) (got []int64, open bool) {
	for {
		select {
		case n, ok := <-s.C:
			if !ok {
				return got, false
			}
			got = append(got, n.Seq)
		default:
			return got, true
		}
	}
}

func TestBrokerDeliversInOrderByTopic(t *testing.T) {
	b := live.NewBroker()
	a1, _ := b.Subscribe("a", 10)
	a2, _ := b.Subscribe("a", 10)
	other, _ := b.Subscribe("b", 10)
	for seq := range int64(3) {
		b.Publish(notice("a", seq+1))
	}
	for _, s := range []*live.Subscription{a1, a2} {
		if got, open := receive(s); fmt.Sprint(got) != "[1 2 3]" || !open {
			t.Errorf("subscriber of a got %v (open %v), want [1 2 3] and open", got, open)
		}
	}
	if got, _ := receive(other); len(got) != 0 {
		t.Errorf("subscriber of b got %v", got)
	}
	if n, _ := b.Stats(); n != 3 {
		t.Errorf("%d subscriptions, want 3", n)
	}
	a1.Close()
	a1.Close() // twice is fine
	if _, open := receive(a1); open || a1.Err() != nil {
		t.Errorf("after Close: open %v, err %v", open, a1.Err())
	}
	b.Publish(notice("a", 4))
	if got, _ := receive(a2); fmt.Sprint(got) != "[4]" {
		t.Errorf("remaining subscriber got %v", got)
	}
}

// A reader that does not keep up is dropped once its buffer is full; the
// others still get everything, and nothing else is held for it.
func TestBrokerDropsSlowReader(t *testing.T) {
	b := live.NewBroker()
	slow, _ := b.Subscribe("a", 4)
	fast, _ := b.Subscribe("a", 4)
	for seq := range int64(20) {
		b.Publish(notice("a", seq+1))
		if seq%4 == 3 {
			if got, _ := receive(fast); len(got) != 4 {
				t.Fatalf("fast reader got %v", got)
			}
		}
	}
	got, open := receive(slow)
	if fmt.Sprint(got) != "[1 2 3 4]" || open {
		t.Errorf("slow reader got %v (open %v), want its buffer [1 2 3 4] and then the end", got, open)
	}
	if !errors.Is(slow.Err(), live.ErrSlow) {
		t.Errorf("slow reader's error %v, want ErrSlow", slow.Err())
	}
	if fast.Err() != nil {
		t.Errorf("fast reader's error %v", fast.Err())
	}
	if n, dropped := b.Stats(); n != 1 || dropped != 1 {
		t.Errorf("stats: %d subscriptions, %d dropped; want 1, 1", n, dropped)
	}
}

func TestBrokerCloseAndResync(t *testing.T) {
	b := live.NewBroker()
	s, _ := b.Subscribe("a", 1)
	b.ResyncAll()
	b.ResyncAll() // one pending signal is enough
	select {
	case <-s.Resync:
	default:
		t.Error("no resync signal")
	}
	select {
	case <-s.Resync:
		t.Error("a second resync signal")
	default:
	}
	b.Close()
	if _, open := receive(s); open || !errors.Is(s.Err(), live.ErrClosed) {
		t.Errorf("after the broker closed: open %v, err %v", open, s.Err())
	}
	if _, err := b.Subscribe("a", 1); !errors.Is(err, live.ErrClosed) {
		t.Errorf("Subscribe after Close: %v, want ErrClosed", err)
	}
}

// The in-memory store announces each board change through the broker as it
// stores it.
func TestMemstoreAnnouncesThroughBroker(t *testing.T) {
	ctx := context.Background()
	b := live.NewBroker()
	st := memstore.New()
	st.Notify = b.Publish
	l, _, err := st.PutLevel(ctx, game.Level{Slug: "lvl", Title: "L", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := b.Subscribe(game.BoardTopic("lvl", l.Version), 8)
	_, hash := game.NewToken()
	p, err := st.CreatePlayer(ctx, "ada", game.RolePlayer, hash)
	if err != nil {
		t.Fatal(err)
	}
	for i, score := range []int64{10, 5, 20} { // the 5 is no improvement
		_, err := st.CreateSubmission(ctx, game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: "lvl",
			Version: l.Version, Design: json.RawMessage(`{}`), Passed: true, Score: score,
			CreatedAt: time.Unix(int64(i), 0)}, "", "")
		if err != nil {
			t.Fatal(err)
		}
	}
	var changes []game.BoardChange
	for _, want := range []int64{1, 2} {
		n := <-sub.C
		var c game.BoardChange
		if err := json.Unmarshal(n.Data, &c); err != nil || n.Seq != want || c.Seq != want {
			t.Fatalf("notice %d: %+v (%v)", want, n, err)
		}
		changes = append(changes, c)
	}
	if c := changes[1]; c.Score != 20 || c.Rank != 1 || c.PreviousRank != 1 || c.PlayerName != "ada" {
		t.Errorf("second change %+v", c)
	}
	if got, _ := receive(sub); len(got) != 0 {
		t.Errorf("more notices: %v", got)
	}
}
