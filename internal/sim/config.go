package sim

// Config is everything about a run that is not the player's design: the level's traffic,
// request mix, client behaviour, chaos schedule and price list.
type Config struct {
	TickMs      float64 `json:"tick_ms"`      // simulated time per tick; default 100
	DurationSec float64 `json:"duration_sec"` // simulated time in all
	Traffic     Traffic `json:"traffic"`
	Mix         Mix     `json:"mix"`
	Client      Client  `json:"client"`
	// WorkingSetGB is the size of the data the reads touch; a cache with less memory holds
	// only that share of it, and its hit ratio drops in proportion. 0 means it always fits.
	WorkingSetGB float64      `json:"working_set_gb,omitempty"`
	Chaos        []ChaosEvent `json:"chaos,omitempty"`
	// Catalog prices the instance types a design may name. Empty means DefaultCatalog().
	Catalog Catalog `json:"catalog,omitempty"`
}

// Traffic is the offered load over time: a base curve plus optional spikes on top.
type Traffic struct {
	// Kind is constant, ramp, step or wave.
	Kind string  `json:"kind"`
	RPS  float64 `json:"rps"` // constant level; the starting level of ramp and step; the mean of wave
	// Ramp: linear from RPS at StartSec to ToRPS at EndSec, flat outside.
	ToRPS    float64 `json:"to_rps,omitempty"`
	StartSec float64 `json:"start_sec,omitempty"`
	EndSec   float64 `json:"end_sec,omitempty"`
	// Step: the level changes to each step's RPS at its AtSec.
	Steps []TrafficStep `json:"steps,omitempty"`
	// Wave (diurnal): RPS + AmplitudeRPS·sin(2π(t+PhaseSec)/PeriodSec).
	AmplitudeRPS float64 `json:"amplitude_rps,omitempty"`
	PeriodSec    float64 `json:"period_sec,omitempty"`
	PhaseSec     float64 `json:"phase_sec,omitempty"`
	// Spikes add RPS on top of the curve for their duration.
	Spikes []TrafficSpike `json:"spikes,omitempty"`
}

// TrafficStep changes the level of a step curve.
type TrafficStep struct {
	AtSec float64 `json:"at_sec"`
	RPS   float64 `json:"rps"`
}

// TrafficSpike adds load for a while (a launch, a newsletter, a bot).
type TrafficSpike struct {
	AtSec       float64 `json:"at_sec"`
	DurationSec float64 `json:"duration_sec"`
	RPS         float64 `json:"rps"`
}

// Mix is the share of each request class; the shares sum to 1.
type Mix struct {
	Static     float64 `json:"static"`
	Read       float64 `json:"read"`
	Write      float64 `json:"write"`
	AsyncWrite float64 `json:"async_write"`
}

func (m Mix) shares() [numClasses]float64 {
	return [numClasses]float64{m.Static, m.Read, m.Write, m.AsyncWrite}
}

// Client is how the level's users behave when a request fails or is slow.
type Client struct {
	TimeoutMs  float64 `json:"timeout_ms"`  // a request slower than this fails at the client
	MaxRetries int     `json:"max_retries"` // retries of one failed request
	// BackoffMs delays the first retry; each later retry waits BackoffMultiplier times longer.
	// 0 retries in the next tick.
	BackoffMs         float64 `json:"backoff_ms,omitempty"`
	BackoffMultiplier float64 `json:"backoff_multiplier,omitempty"`
	// RetryBudget caps retries per tick at this share of fresh requests (0 = no cap),
	// as gRPC's and Finagle's retry budgets do.
	RetryBudget float64 `json:"retry_budget,omitempty"`
}

// Limits on the size of a run; a design or configuration beyond them is invalid.
const (
	MaxComponents  = 128
	MaxEdges       = 1024
	MaxTicks       = 100_000
	MaxChaosEvents = 100
	MaxCurvePoints = 1000
	MaxRPS         = 1e7
	maxIDLen       = 64
	defaultTickMs  = 100
)
