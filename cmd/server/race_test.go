//go:build race

package main

// raceEnabled: the race detector slows simulations several times over.
const raceEnabled = true
