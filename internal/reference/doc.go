// Package reference is the per-request simulation the engine (package sim) is held
// against: one event per thing that happens to one request, seeded, written for clarity
// rather than speed. It reads a design and a level's configuration as their documentation
// says, never through the engine's code: it takes the engine's exported types, the
// parameters' documented defaults and the shared catalog's constants, and nothing of how
// the engine computes. Its rules are written down in reference.md.
//
// Trace gives one seed's run tick by tick for the engine's overload table; Run gives the
// game's view of a design over several seeds, a sim.Result that a level judges as it
// judges the engine's, for the campaign's verdicts to be held against it.
//
// It is pure computation: no I/O, no clock, no global state; its randomness is a seeded
// generator per run. Only tests import it.
package reference
