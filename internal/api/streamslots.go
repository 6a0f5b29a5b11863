package api

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"backpressure/internal/game"
)

// streamSlots caps the live streams held open, in total and per client
// address, so that no client can take the replica's streams (each holds a
// goroutine, a buffer and a connection) away from the others.
type streamSlots struct {
	mu        sync.Mutex
	max       int
	perClient int
	open      int
	byClient  map[string]int

	gauge   prometheus.Gauge
	refused *prometheus.CounterVec
	dropped prometheus.Counter
}

func newStreamSlots(max, perClient int, reg prometheus.Registerer) *streamSlots {
	l := &streamSlots{
		max: max, perClient: perClient, byClient: map[string]int{},
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_streams_open",
			Help: "Live streams (Server-Sent Events) open on this replica.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_streams_refused_total",
			Help: "Live streams refused, by the limit reached (total, address).",
		}, []string{"limit"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_streams_dropped_total",
			Help: "Live streams ended because their client did not keep up.",
		}),
	}
	reg.MustRegister(l.gauge, l.refused, l.dropped)
	return l
}

// acquire takes a slot for a stream from client, or says which limit is
// reached. release must be called once the stream ends.
func (l *streamSlots) acquire(client string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open >= l.max:
		l.refused.WithLabelValues("total").Inc()
		return nil, errorf(eBusy, "this server has %d live streams open, its limit; retry after the time in Retry-After (another replica may have room)", l.max)
	case l.byClient[client] >= l.perClient:
		l.refused.WithLabelValues("address").Inc()
		return nil, errorf(game.ERATELIMIT, "your address has %d live streams open, the limit per address; close one first", l.perClient)
	}
	l.open++
	l.byClient[client]++
	l.gauge.Inc()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.byClient[client]--; l.byClient[client] == 0 {
				delete(l.byClient, client)
			}
			l.gauge.Dec()
		})
	}, nil
}

// openCount is the number of streams open.
func (l *streamSlots) openCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}
