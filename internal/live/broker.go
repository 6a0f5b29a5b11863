package live

import (
	"errors"
	"sync"

	"backpressure/internal/game"
)

var (
	// ErrSlow ends a subscription whose reader let its buffer fill up.
	ErrSlow = errors.New("live: the reader fell behind and was dropped")
	// ErrClosed ends every subscription when the broker closes, and
	// refuses new ones.
	ErrClosed = errors.New("live: the broker is closed")
)

// Broker delivers each published notice to the subscriptions of its topic.
// It is safe for concurrent use; the zero value is not usable, see
// NewBroker.
type Broker struct {
	mu      sync.Mutex
	topics  map[string]map[*Subscription]struct{}
	count   int
	dropped int64
	closed  bool
}

// NewBroker returns an open broker with no subscriptions.
func NewBroker() *Broker {
	return &Broker{topics: map[string]map[*Subscription]struct{}{}}
}

// Subscription is one reader's interest in one topic. Notices arrive on C
// in publication order; C is closed when the subscription ends, and Err
// then says why. Resync receives a signal when notices may have been lost
// upstream (the listener reconnected): the reader should read from the
// store what came after the last notice it saw.
type Subscription struct {
	C      <-chan game.Notice
	Resync <-chan struct{}

	topic  string
	c      chan game.Notice
	resync chan struct{}
	b      *Broker
	err    error // set under b.mu when c is closed
}

// Subscribe follows topic with a buffer of buffer notices (at least 1):
// a reader that lets it fill is dropped (ErrSlow) rather than slowing the
// publisher or growing memory.
func (b *Broker) Subscribe(topic string, buffer int) (*Subscription, error) {
	c := make(chan game.Notice, max(buffer, 1))
	r := make(chan struct{}, 1)
	s := &Subscription{C: c, Resync: r, topic: topic, c: c, resync: r, b: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	subs := b.topics[topic]
	if subs == nil {
		subs = map[*Subscription]struct{}{}
		b.topics[topic] = subs
	}
	subs[s] = struct{}{}
	b.count++
	return s, nil
}

// Publish hands n to every subscription of its topic without waiting:
// subscriptions whose buffer is full are ended with ErrSlow. Subscribers
// share n.Data and must not modify it.
func (b *Broker) Publish(n game.Notice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.topics[n.Topic] {
		select {
		case s.c <- n:
		default:
			b.dropped++
			b.end(s, ErrSlow)
		}
	}
}

// ResyncAll signals every subscription that notices may have been lost.
func (b *Broker) ResyncAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, subs := range b.topics {
		for s := range subs {
			select {
			case s.resync <- struct{}{}:
			default: // one pending signal is enough
			}
		}
	}
}

// Close ends every subscription with ErrClosed and refuses new ones.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, subs := range b.topics {
		for s := range subs {
			b.end(s, ErrClosed)
		}
	}
}

// Stats reports the open subscriptions and how many were dropped as slow
// since the broker started.
func (b *Broker) Stats() (subscriptions int, dropped int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count, b.dropped
}

// end removes s and closes its channel; b.mu is held.
func (b *Broker) end(s *Subscription, err error) {
	subs, ok := b.topics[s.topic]
	if _, in := subs[s]; !ok || !in {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(b.topics, s.topic)
	}
	b.count--
	s.err = err
	close(s.c)
}

// Close ends the subscription (a no-op if it has ended).
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.end(s, nil)
}

// Err says why C was closed: ErrSlow, ErrClosed, or nil after Close or
// while the subscription is open.
func (s *Subscription) Err() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.err
}
