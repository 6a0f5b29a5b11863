//go:build race

package reference

// raceEnabled: the race detector is on; measurements that only describe the reference are
// left to the plain run.
const raceEnabled = true
