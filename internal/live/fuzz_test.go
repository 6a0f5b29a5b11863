package live

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

// FuzzNotification: whatever arrives on the channel, the listener publishes
// only notices with a topic and a positive number, and never panics.
func FuzzNotification(f *testing.F) {
	for _, s := range []string{`{"topic":"board:a:1","seq":1,"data":{"seq":1}}`, `{"topic":"x","seq":0}`, `null`, `[]`,
		`{"topic":"","seq":3}`, `{"topic":"t","seq":2,"data":null}`, `not json`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		b := NewBroker()
		var topic string
		var n game.Notice
		if err := json.Unmarshal([]byte(payload), &n); err == nil {
			topic = n.Topic
		}
		sub, _ := b.Subscribe(topic, 4)
		h := handler{b: b, log: slog.New(slog.DiscardHandler)}
		err := h.HandleNotification(context.Background(), &pgconn.Notification{Channel: "c", Payload: payload}, nil)
		select {
		case got := <-sub.C:
			if err != nil || got.Topic == "" || got.Seq < 1 || (got.Data != nil && !json.Valid(got.Data)) {
				t.Errorf("published %+v (err %v) from %q", got, err, payload)
			}
		default:
			if err == nil {
				t.Errorf("accepted %q but published nothing", payload)
			}
		}
	})
}
