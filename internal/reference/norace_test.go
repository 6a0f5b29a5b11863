//go:build !race

package reference

const raceEnabled = false
