// Package layering holds no code: its test checks the import rules between Backpressure's
// packages (STYLE.md), so that dependencies keep pointing inward.
package layering
