package sim

import "fmt"

// Result is the full output of a run: the timeline and its summary. Its JSON form is stable
// and snake_case; rates are per second, latencies in milliseconds, costs in dollars per hour,
// counts in requests (fractional: the engine moves fluid amounts of requests).
type Result struct {
	TickMs     float64         `json:"tick_ms"`
	Components []ComponentInfo `json:"components"`
	Ticks      []Tick          `json:"ticks"`
	Summary    Summary         `json:"summary"`

	// records is the one block the run made Ticks' component records in, for
	// Scratch.Recycle: a result that did not come from a run has none.
	records []ComponentTick
}

// ComponentInfo names a component; Tick.Components follows this order.
type ComponentInfo struct {
	ID   string `json:"id"`
	Type Kind   `json:"type"`
}

// Tick is the system and every component at the end of one tick.
type Tick struct {
	T           float64 `json:"t"`            // seconds since the start, at the end of the tick
	OfferedRPS  float64 `json:"offered_rps"`  // attempts reaching the system: fresh plus retries
	FreshRPS    float64 `json:"fresh_rps"`    // new requests from the traffic curve
	RetryRPS    float64 `json:"retry_rps"`    // retries of earlier failures
	ServedRPS   float64 `json:"served_rps"`   // answered successfully within the client timeout
	RejectedRPS float64 `json:"rejected_rps"` // refused: full buffers (503), rate limits (429), open breakers
	ErrorRPS    float64 `json:"error_rps"`    // failed inside a component: failed nodes, partitions, error rates
	TimedOutRPS float64 `json:"timed_out_rps"`
	Queued      float64 `json:"queued"`     // requests waiting in backlogs at the end of the tick
	ErrorRate   float64 `json:"error_rate"` // failed share of the attempts that finished this tick, at egress
	MeanMs      float64 `json:"mean_ms"`
	P50Ms       float64 `json:"p50_ms"`
	P95Ms       float64 `json:"p95_ms"`
	P99Ms       float64 `json:"p99_ms"`
	CostPerHour float64 `json:"cost_per_hour"`
	// Events lists the chaos events active during the tick, by id.
	Events     []string        `json:"events,omitempty"`
	Components []ComponentTick `json:"components"`
}

// Status is a component's state during a tick. It is a small number in memory, so that a
// run's per-tick records hold no pointers for the garbage collector to scan, and a word
// in JSON.
type Status uint8

// Component statuses.
const (
	StatusIdle      Status = iota
	StatusOK               // below 80% utilisation
	StatusBusy             // utilisation at or above 80%: the knee of the latency curve
	StatusSaturated        // at capacity, backlog growing or requests rejected
	StatusFailed           // stopped by chaos
)

var statusNames = [...]string{"idle", "ok", "busy", "saturated", "failed"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// MarshalText writes the status as its word.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status word.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown component status %q", b)
}

// Breaker is an API gateway's circuit breaker state; the zero value means no breaker.
type Breaker uint8

// Circuit breaker states.
const (
	BreakerNone Breaker = iota
	BreakerClosed
	BreakerOpen
	BreakerHalfOpen
)

var breakerNames = [...]string{"", "closed", "open", "half_open"}

func (b Breaker) String() string {
	if int(b) < len(breakerNames) {
		return breakerNames[b]
	}
	return "unknown"
}

// MarshalText writes the state as its word.
func (b Breaker) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads a state word.
func (b *Breaker) UnmarshalText(t []byte) error {
	for i, n := range breakerNames {
		if n == string(t) {
			*b = Breaker(i)
			return nil
		}
	}
	return fmt.Errorf("unknown breaker state %q", t)
}

// ComponentTick is one component during one tick.
type ComponentTick struct {
	InputRPS    float64 `json:"input_rps"`
	OutputRPS   float64 `json:"output_rps"` // requests it finished this tick (served or passed on)
	Utilization float64 `json:"utilization"`
	Backlog     float64 `json:"backlog"`    // requests waiting beyond the stochastic queue
	QueueFill   float64 `json:"queue_fill"` // backlog ÷ buffer, 0..1
	RejectedRPS float64 `json:"rejected_rps"`
	ErrorRate   float64 `json:"error_rate"` // share of its input that failed here
	MeanMs      float64 `json:"mean_ms"`    // own response time: wait plus service, excluding downstream calls
	P99Ms       float64 `json:"p99_ms"`
	CostPerHour float64 `json:"cost_per_hour"`
	Status      Status  `json:"status"`
	Workers     int     `json:"workers"`                      // current workers (replicas × concurrency, connections…)
	HitRatio    float64 `json:"hit_ratio,omitempty"`          // cache and CDN
	LagMs       float64 `json:"replication_lag_ms,omitempty"` // database: worst replica
	Breaker     Breaker `json:"breaker,omitempty"`            // api gateway: closed, open, half_open at the tick's start
	// BreakerOpens is how many times the gateway's breaker opened during the tick: a probe
	// judged within a tick can open it again in the tick it started probing.
	BreakerOpens uint8 `json:"breaker_opens,omitempty"`
	Replicas     int   `json:"replicas,omitempty"` // container pool: replicas serving
	// ColdStartShare is the share of a function's invocations that started cold.
	ColdStartShare float64 `json:"cold_start_share,omitempty"`

	// Client deadlines (backlog.go).
	// LateRPS is work it served whose client had already given up: wasted capacity.
	LateRPS float64 `json:"late_rps,omitempty"`
}

// Summary condenses a run.
type Summary struct {
	Ticks       int     `json:"ticks"`
	DurationSec float64 `json:"duration_sec"`
	Offered     float64 `json:"offered"`
	Fresh       float64 `json:"fresh"`
	Retries     float64 `json:"retries"`
	Served      float64 `json:"served"`
	Rejected    float64 `json:"rejected"`
	Errors      float64 `json:"errors"`
	TimedOut    float64 `json:"timed_out"`
	QueuedAtEnd float64 `json:"queued_at_end"`
	// Dropped counts fresh requests that never got a successful answer, retries included.
	Dropped     float64 `json:"dropped"`
	ErrorRate   float64 `json:"error_rate"`
	MeanMs      float64 `json:"mean_ms"`
	P50Ms       float64 `json:"p50_ms"`
	P95Ms       float64 `json:"p95_ms"`
	P99Ms       float64 `json:"p99_ms"`
	CostPerHour float64 `json:"mean_cost_per_hour"`
	TotalCost   float64 `json:"total_cost"`
	// Why is the "why it happened" timeline: for each stretch of failing ticks, the
	// limiting component and the cause, then the structural failures (see doc.go). A run
	// with no failing tick and no structural failure has none.
	Why []Why `json:"why"`
	// Busiest is the component with the highest peak utilisation over the run.
	Busiest string `json:"busiest"`
	// FirstFailingSec is the end of the first tick in which more than 5% of the attempts
	// failed (seed architecture-simulator's failure rule), nil if none did.
	FirstFailingSec *float64 `json:"first_failing_sec"`
	// LostWrites counts asynchronous writes acknowledged to the client but never stored
	// because the consumers or the database could not keep up on average.
	LostWrites float64 `json:"lost_writes"`
	// Failures lists structural failures that fail a run whatever its SLA numbers:
	// "lost_data:<queue>", "replication_lag:<database>", "split_brain:<database>:<database>".
	Failures   []string           `json:"failures"`
	Components []ComponentSummary `json:"components"`
	Events     []EventImpact      `json:"events"`

	// Client deadlines (backlog.go).
	// LateCompletions counts answers the system produced after the client had given up:
	// work that waited past its deadline and was served all the same, and answers slower
	// than the timeout. They are timed out for the client and wasted for the system.
	LateCompletions float64 `json:"late_completions"`
}

// ComponentSummary is one component over the run.
type ComponentSummary struct {
	ID              string  `json:"id"`
	Type            Kind    `json:"type"`
	PeakUtilization float64 `json:"peak_utilization"`
	MeanUtilization float64 `json:"mean_utilization"`
	Rejected        float64 `json:"rejected"`
	Errors          float64 `json:"errors"`
	PeakBacklog     float64 `json:"peak_backlog"`
	MaxLagMs        float64 `json:"max_replication_lag_ms,omitempty"`
	MeanCostPerHour float64 `json:"mean_cost_per_hour"`

	// Client deadlines (backlog.go).
	// Late counts the requests it served after their client had given up (wasted work).
	Late float64 `json:"late"`
}

// EventImpact measures what one chaos event did (the resilience win condition reads it).
type EventImpact struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	StartSec float64 `json:"start_sec"`
	EndSec   float64 `json:"end_sec"`
	// Baseline: the mean error rate and the p99 over the window before the event.
	BaselineErrorRate float64 `json:"baseline_error_rate"`
	BaselineP99Ms     float64 `json:"baseline_p99_ms"`
	// During the event: mean error rate and worst tick p99.
	ErrorRate float64 `json:"error_rate"`
	P99Ms     float64 `json:"p99_ms"`
	PeakError float64 `json:"peak_error_rate"`
	// RecoverySec is the time from the end of the event until the system is back within its
	// baseline (see doc.go), nil when it never is within the run.
	RecoverySec *float64 `json:"recovery_sec"`
	// Lost counts requests that failed during the event and its recovery beyond the baseline.
	Lost float64 `json:"lost_requests"`
}
