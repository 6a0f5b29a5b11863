package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// uploadHeaviestLevel uploads, as a new author made with the admin's token, the heaviest
// variant of level base that the server's cost bound lets through: base's components and
// starting design, 100 ms ticks for 200 s, and the rest of the bound filled with what the
// engine works through most slowly a tick (RELIABILITY.md: chaos events and traffic
// points): chaos latency injections on the starting design's edges beside the base
// level's own chaos, as many as a level may have (100), and a step curve of
// traffic points, as many as the bound leaves room for (found from the refusal that names
// the worst-case cost). It returns the new level's slug.
func uploadHeaviestLevel(ctx context.Context, c *http.Client, base, adminToken, slug, name string) (string, error) {
	status, _, out, err := send(ctx, c, "GET", base+"/v1/challenges/"+slug, "", nil, "")
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("level %s: %d %v", slug, status, err)
	}
	var got struct {
		Definition map[string]any `json:"definition"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.Definition == nil {
		return "", fmt.Errorf("level %s: no definition (%v)", slug, err)
	}
	token, id, err := registerPlayer(ctx, c, base, name)
	if err != nil {
		return "", err
	}
	role, _ := json.Marshal(map[string]string{"role": "author"})
	if status, _, out, err := send(ctx, c, "PUT", base+"/v1/players/"+id+"/role", adminToken, role, ""); err != nil || status != http.StatusOK {
		return "", fmt.Errorf("make %s an author: %d %v %s", name, status, err, out)
	}
	def := got.Definition
	heavy := name + "-heaviest"
	def["slug"], def["title"] = heavy, "The heaviest level the cost bound allows"
	delete(def, "history")
	delete(def, "$schema")
	run := def["run"].(map[string]any)
	const ticks, duration = 2000, 200.0
	run["tick_ms"], run["duration_sec"] = 100.0, duration
	design := def["starting_design"].(map[string]any)
	edges := design["edges"].([]any)
	chaos, _ := run["chaos"].([]any) // the base level's own, which its starting design fails on
	for i := range maxChaos - len(chaos) {
		e := edges[i%len(edges)].(map[string]any)
		chaos = append(chaos, map[string]any{"id": fmt.Sprintf("slow-%d", i), "kind": "latency_injection",
			"at_sec": 45 + float64(i)*1.3, "duration_sec": 1.0, "from": e["from"], "to": e["to"],
			"params": map[string]any{"extra_latency_ms": 1.0}})
	}
	run["chaos"] = chaos
	traffic := run["traffic"].(map[string]any)
	rps, _ := traffic["rps"].(float64)
	points := 1000
	for range 4 {
		steps := make([]any, points)
		for i := range steps {
			steps[i] = map[string]any{"at_sec": duration * float64(i+1) / float64(points+1), "rps": rps * (0.9 + 0.2*float64(i%2))}
		}
		run["traffic"] = map[string]any{"kind": "step", "rps": rps, "steps": steps}
		body, _ := json.Marshal(def)
		status, _, out, err := send(ctx, c, "PUT", base+"/v1/challenges/"+heavy, token, body, "")
		if err != nil {
			return "", err
		}
		if status == http.StatusCreated || status == http.StatusOK {
			fmt.Printf("uploaded %s: %d ticks, %d chaos events, %d traffic points\n", heavy, ticks, len(chaos), points)
			return heavy, nil
		}
		var refusal struct {
			Errors []struct{ Field, Reason string }
		}
		_ = json.Unmarshal(out, &refusal)
		var cost int64
		for _, e := range refusal.Errors {
			if i := strings.Index(e.Reason, "worst-case run cost of "); i >= 0 {
				fmt.Sscan(e.Reason[i+len("worst-case run cost of "):], &cost)
			}
		}
		if status != http.StatusUnprocessableEntity || cost <= maxLevelRunCost {
			return "", fmt.Errorf("upload %s: %d %s", heavy, status, out)
		}
		points -= int((cost - maxLevelRunCost + ticks - 1) / ticks)
		if points < 1 {
			break
		}
	}
	return "", fmt.Errorf("upload %s: refused however few traffic points", heavy)
}

// maxChaos is the most chaos events a level may have.
const maxChaos = 100

// maxLevelRunCost is the server's bound on a level's worst-case run cost
// (challenges.MaxLevelRunCost).
const maxLevelRunCost = 2_500_000
