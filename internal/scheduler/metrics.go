package scheduler

import "github.com/prometheus/client_golang/prometheus"

// Metrics are a scheduler's Prometheus collectors. The transport registers them (with
// Collectors) in its own registry and counts its own refusals in RateLimited, so that
// every refusal of a client is one series.
type Metrics struct {
	Simulations *prometheus.CounterVec
	SimDuration *prometheus.HistogramVec
	QueueDepth  prometheus.Gauge
	Running     prometheus.Gauge
	Rejections  prometheus.Counter
	RateLimited *prometheus.CounterVec
	SimWaits    *prometheus.CounterVec
	HintYields  prometheus.Counter
	SimCost     *prometheus.CounterVec
}

// NewMetrics returns unregistered collectors.
func NewMetrics() *Metrics {
	return &Metrics{
		Simulations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulations_total",
			Help: "Simulation jobs run by the worker pool, by kind (simulation, submission, hint, level) and outcome (ok, invalid, error, cancelled, timeout).",
		}, []string{"kind", "outcome"}),
		SimDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "backpressure_simulation_duration_seconds",
			Help:    "Time a simulation job held a worker, by kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"kind"}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_sim_pool_queue_depth",
			Help: "Simulation jobs waiting for a worker.",
		}),
		Running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "backpressure_sim_pool_running",
			Help: "Simulation jobs holding a worker.",
		}),
		Rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_sim_pool_rejections_total",
			Help: "Simulation jobs refused with 503 because the queue was full.",
		}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_rate_limited_total",
			Help: "Requests refused with 429, by limit (address, player, simulation, simulation_budget, hint_in_flight, simulation_in_flight).",
		}, []string{"limit"}),
		SimWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulation_waits_total",
			Help: "Simulation jobs that found every worker of their kind busy and queued, by kind. Each kind has workers of its own, so a submission never waits behind a hint or a dry run.",
		}, []string{"kind"}),
		HintYields: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_hint_yields_total",
			Help: "Times a hint paused between two of its runs for submissions in progress.",
		}),
		SimCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backpressure_simulation_cost_total",
			Help: "Simulation cost charged to players' budgets before their runs started, in path-ticks, by kind.",
		}, []string{"kind"}),
	}
}

// Collectors lists m's collectors for registering.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Simulations, m.SimDuration, m.QueueDepth, m.Running, m.Rejections,
		m.RateLimited, m.SimWaits, m.HintYields, m.SimCost}
}
