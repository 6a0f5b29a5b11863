package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// An event's attempts commit without numbering their changes (so that they
// commit side by side, not one at a time: migration 000014); the announcer
// numbers them after commit, in batches, and sends them with NOTIFY.
//
// Each replica's announcer handles the events its own attempts touched,
// woken by each commit and waiting announceDelay so that a crowd's
// attempts share a batch; replicas take turns per event on the event's
// row. A sweep every announceSweep picks up attempts whose replica stopped
// before announcing them, and the finish numbers whatever is left before
// the final change. So every committed attempt is announced, once, in an
// order every replica sees alike, within about announceDelay of its commit
// while its replica runs.
const (
	announceDelay = 20 * time.Millisecond
	announceSweep = 2 * time.Second
	// announceBatch bounds one batch's changes (one transaction's NOTIFYs);
	// a crowd's 20 ms holds a few dozen.
	announceBatch = 10_000
)

type announcer struct {
	store *Store
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	pending map[uuid.UUID]struct{}
	closing sync.Once
}

func newAnnouncer(s *Store) *announcer {
	a := &announcer{store: s, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		pending: map[uuid.UUID]struct{}{}}
	go a.loop()
	return a
}

// committed asks for event id's committed attempts to be announced soon.
func (a *announcer) committed(id uuid.UUID) {
	a.mu.Lock()
	a.pending[id] = struct{}{}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// close stops the loop; attempts it has not announced are announced by
// another replica's sweep or the event's finish.
func (a *announcer) close() {
	a.closing.Do(func() { close(a.stop) })
	<-a.done
}

func (a *announcer) loop() {
	defer close(a.done)
	sweep := time.NewTicker(announceSweep)
	defer sweep.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-sweep.C:
			a.sweep()
		case <-a.wake:
			select {
			case <-a.stop:
				return
			case <-time.After(announceDelay):
			}
			a.mu.Lock()
			events := a.pending
			a.pending = map[uuid.UUID]struct{}{}
			a.mu.Unlock()
			for id := range events {
				a.announce(id) // busy or unreachable: the sweep tries again
			}
		}
	}
}

// sweep announces every event with an attempt not yet announced.
func (a *announcer) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), announceSweep)
	defer cancel()
	_, _ = a.store.AnnounceEvents(ctx)
}

// announce announces one event's attempts; the sweep retries a failure.
func (a *announcer) announce(id uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), announceSweep)
	defer cancel()
	_, _ = a.store.announceEvent(ctx, id)
}

// announceEvent numbers and announces event id's committed attempts not yet
// announced, in one REPEATABLE READ transaction (bp_event_announce), and
// returns how many.
func (s *Store) announceEvent(ctx context.Context, id uuid.UUID) (int, error) {
	var n int
	err := s.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT bp_event_announce($1, $2, $3, $4)`,
			id, announceBatch, NoticeChannel, maxNoticePayload).Scan(&n)
	})
	return n, err
}

// AnnounceEvents announces now, rather than within the announcer's delay,
// every committed event attempt not yet announced, so that what a test
// reads next (a standings page's Seq, a stream) is numbered. It returns
// how many changes it announced.
func (s *Store) AnnounceEvents(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT event_id FROM event_submissions WHERE seq IS NULL`)
	if err != nil {
		return 0, translate("announce events", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, translate("announce events", err)
	}
	total := 0
	var errs []error
	for _, id := range ids {
		n, err := s.announceEvent(ctx, id)
		total += n
		errs = append(errs, err)
	}
	return total, translate("announce events", errors.Join(errs...))
}
