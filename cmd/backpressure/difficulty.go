package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"backpressure/internal/challenges"
)

// cmdDifficulty measures every campaign level with its reference solution and prints the
// difficulty table of challenges/README.md (Markdown), or the rows as JSON.
func cmdDifficulty(ctx context.Context, o options, dir string) error {
	levels, err := challenges.Campaign()
	if err != nil {
		return err
	}
	rows := make([]challenges.Curve, 0, len(levels))
	for _, l := range levels {
		data, err := os.ReadFile(filepath.Join(dir, l.Slug+".json"))
		if err != nil {
			return invalidf("difficulty: the reference solution of %s: %s", l.Slug, errText(err))
		}
		ref, err := challenges.ParseDesign(data)
		if err != nil {
			return invalidf("difficulty: the reference solution of %s: %v", l.Slug, err)
		}
		row, err := l.MeasureDifficulty(ctx, ref)
		if err != nil {
			return fmt.Errorf("difficulty of %s: %w", l.Slug, err)
		}
		rows = append(rows, row)
	}
	if o.json {
		return writeJSON(o.stdout, rows)
	}
	fmt.Fprintln(o.stdout, "| # | level | difficulty | lesson | single changes that pass | hint's search | reference's tightest margin |")
	fmt.Fprintln(o.stdout, "|---|---|---|---|---|---|---|")
	for i, r := range rows {
		fmt.Fprintf(o.stdout, "| %d | %s | %s | %s | %d of %d | %d | %.1f%% |\n", i+1, r.Slug, r.Difficulty,
			strings.Join(r.Mechanics, ", "), r.SingleFixes, r.Candidates, r.HintTried, r.MarginShare*100)
	}
	fmt.Fprintln(o.stdout)
	fmt.Fprintln(o.stdout, "| chapter | difficulty | levels | median single changes that pass |")
	fmt.Fprintln(o.stdout, "|---|---|---|---|")
	for i, c := range challenges.Chapters(rows) {
		fmt.Fprintf(o.stdout, "| %d | %s | %d | %g |\n", i+1, c.Difficulty, c.Levels, c.MedianSingleFixes)
	}
	return nil
}
