//go:build race

package sim

// raceEnabled: the race detector is on; measurements that only repeat the overload
// table at other settings are left to the plain run.
const raceEnabled = true
