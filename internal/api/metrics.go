package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
)

// metrics are one server's Prometheus collectors, in a registry of its own
// so that several servers can live in one process (tests).
type metrics struct {
	registry *prometheus.Registry

	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
	shed      prometheus.Counter
	inFlight  prometheus.Gauge
	// The simulation scheduler's, whose RateLimited the transport's own limits count in too.
	*scheduler.Metrics
	levelLoads prometheus.Counter
}

// newMetrics registers the transport's collectors and those of the rules it calls.
func newMetrics(r *rules.Service) *metrics {
	m := &metrics{
		registry:   prometheus.NewRegistry(),
		Metrics:    r.Scheduler().Metrics(),
		levelLoads: r.LevelLoads(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_http_requests_total",
			Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "backpressure_http_request_duration_seconds",
			Help:    "HTTP request durations by method, route pattern and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route", "status"}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_http_shed_total",
			Help: "API requests refused with 503 because MAX_INFLIGHT requests were in progress.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_http_in_flight",
			Help: "API requests in progress.",
		}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.durations, m.shed, m.inFlight,
	)
	m.registry.MustRegister(r.Collectors()...)
	return m
}

func (m *metrics) observeRequest(method, route string, status int, d time.Duration) {
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(method, route, code).Inc()
	m.durations.WithLabelValues(method, route, code).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
