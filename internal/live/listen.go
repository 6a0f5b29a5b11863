package live

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"

	"backpressure/internal/game"
)

// ReconnectDelay is how long Listen waits before connecting again after
// losing its connection.
const ReconnectDelay = time.Second

// Listen receives the notices that any replica's transactions send on
// PostgreSQL channel and publishes them to b, until ctx is done. connect
// must return a connection for Listen's use alone, made directly to the
// database: a LISTEN through a transaction-pooling pooler hears nothing
// once the pooler gives its server connection to someone else. When it
// (re)connects, Listen tells every subscription to resynchronise, since
// whatever was sent while it was away is lost. Payloads that are not
// notices are logged and skipped.
func Listen(ctx context.Context, b *Broker, channel string, connect func(context.Context) (*pgx.Conn, error), log *slog.Logger) error {
	l := &pgxlisten.Listener{
		Connect: connect,
		LogError: func(ctx context.Context, err error) {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "live listener", "err", err)
			}
		},
		ReconnectDelay: ReconnectDelay,
	}
	l.Handle(channel, handler{b: b, log: log})
	err := l.Listen(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("live: listen on %s: %w", channel, err)
}

// handler publishes each notification's notice, and resynchronises readers
// on every (re)connection.
type handler struct {
	b   *Broker
	log *slog.Logger
}

func (h handler) HandleNotification(ctx context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	var notice game.Notice
	if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil || notice.Topic == "" || notice.Seq < 1 {
		return fmt.Errorf("a notification on %s is not a notice (%d bytes)", n.Channel, len(n.Payload))
	}
	if string(notice.Data) == "null" {
		notice.Data = nil
	}
	h.b.Publish(notice)
	return nil
}

// HandleBacklog runs once LISTEN is in place: anything committed before is
// in the store, so readers look there.
func (h handler) HandleBacklog(ctx context.Context, channel string, _ *pgx.Conn) error {
	h.log.InfoContext(ctx, "live listener connected", "channel", channel)
	h.b.ResyncAll()
	return nil
}
