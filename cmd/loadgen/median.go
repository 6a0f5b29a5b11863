package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
)

var stdout = os.Stdout

func writeFile(name string, data []byte) error { return os.WriteFile(name, data, 0o644) }

// cmdMedian prints the median of each figure over several -json reports.
func cmdMedian(files []string) error {
	if len(files) == 0 {
		return errors.New("usage: loadgen median REPORT.json [REPORT.json ...]")
	}
	var reps []report
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r report
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		reps = append(reps, r)
	}
	med := func(get func(report) float64) float64 {
		var vs []float64
		for _, r := range reps {
			vs = append(vs, get(r))
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	fmt.Fprintf(stdout, "medians over %d runs\n", len(reps))
	fmt.Fprintf(stdout, "  submissions/s %.1f, requests/s %.0f, 5xx %.0f, 503 %.0f, 429 %.0f, hangs %.0f, max latency %.1f ms\n",
		med(func(r report) float64 { return r.SubmitsPerSecond }), med(func(r report) float64 { return r.RPS }),
		med(func(r report) float64 { return float64(r.Status5xx) }), med(func(r report) float64 { return float64(r.Status503) }),
		med(func(r report) float64 { return float64(r.Status429) }), med(func(r report) float64 { return float64(r.Hangs) }),
		med(func(r report) float64 { return r.MaxLatencyMS }))
	if reps[0].Memory != nil {
		fmt.Fprintf(stdout, "  server RSS MiB: first %.1f, at a quarter %.1f, max %.1f, last %.1f\n",
			med(func(r report) float64 { return r.Memory.FirstMiB }), med(func(r report) float64 { return r.Memory.QuarterMiB }),
			med(func(r report) float64 { return r.Memory.MaxMiB }),
			med(func(r report) float64 { return r.Memory.LastMiB }))
	}
	routes := map[string]bool{}
	for _, r := range reps {
		for k := range r.Routes {
			routes[k] = true
		}
	}
	var names []string
	for k := range routes {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "  %-30s %9s %9s\n", "route", "p50 ms", "p99 ms")
	for _, k := range names {
		fmt.Fprintf(stdout, "  %-30s %9.2f %9.2f\n", k,
			med(func(r report) float64 { return r.Routes[k].P50MS }), med(func(r report) float64 { return r.Routes[k].P99MS }))
	}
	return nil
}
