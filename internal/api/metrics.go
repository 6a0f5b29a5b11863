package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are one server's Prometheus collectors, in a registry of its own
// so that several servers can live in one process (tests).
type metrics struct {
	registry *prometheus.Registry

	requests    *prometheus.CounterVec
	durations   *prometheus.HistogramVec
	simulations *prometheus.CounterVec
	simDuration *prometheus.HistogramVec
	queueDepth  prometheus.Gauge
	running     prometheus.Gauge
	rejections  prometheus.Counter
	shed        prometheus.Counter
	inFlight    prometheus.Gauge
	rateLimited *prometheus.CounterVec
	simWaits    *prometheus.CounterVec
	hintYields  prometheus.Counter
	simCost     *prometheus.CounterVec
	levelLoads  prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_http_requests_total",
			Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "backpressure_http_request_duration_seconds",
			Help:    "HTTP request durations by method, route pattern and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route", "status"}),
		simulations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulations_total",
			Help: "Simulation jobs run by the worker pool, by kind (simulation, submission, hint, level) and outcome (ok, invalid, error, cancelled, timeout).",
		}, []string{"kind", "outcome"}),
		simDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "backpressure_simulation_duration_seconds",
			Help:    "Time a simulation job held a worker, by kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"kind"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_sim_pool_queue_depth",
			Help: "Simulation jobs waiting for a worker.",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_sim_pool_running",
			Help: "Simulation jobs holding a worker.",
		}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_sim_pool_rejections_total",
			Help: "Simulation jobs refused with 503 because the queue was full.",
		}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_http_shed_total",
			Help: "API requests refused with 503 because MAX_INFLIGHT requests were in progress.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_http_in_flight",
			Help: "API requests in progress.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_rate_limited_total",
			Help: "Requests refused with 429, by limit (address, player, simulation, simulation_budget, hint_in_flight, simulation_in_flight).",
		}, []string{"limit"}),
		simWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulation_waits_total",
			Help: "Simulation jobs that found every worker of their kind busy and queued, by kind. Each kind has workers of its own, so a submission never waits behind a hint or a dry run.",
		}, []string{"kind"}),
		hintYields: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_hint_yields_total",
			Help: "Times a hint paused between two of its runs for submissions in progress.",
		}),
		simCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulation_cost_total",
			Help: "Simulation cost charged to players' budgets before their runs started, in path-ticks, by kind.",
		}, []string{"kind"}),
		levelLoads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_level_loads_total",
			Help: "Stored level versions decoded into the level cache (concurrent misses of one version share one load; a load never simulates).",
		}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.durations, m.simulations, m.simDuration,
		m.queueDepth, m.running, m.rejections, m.shed, m.inFlight, m.rateLimited,
		m.simWaits, m.hintYields, m.simCost, m.levelLoads,
	)
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
