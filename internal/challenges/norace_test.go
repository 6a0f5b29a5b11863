//go:build !race

package challenges

const raceEnabled = false
