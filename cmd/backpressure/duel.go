package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Duels against a server: every duel command needs a player token
// (--token or BACKPRESSURE_TOKEN), ratings do not.

type duelDoc struct {
	ID      string `json:"id"`
	Level   string `json:"level"`
	Version int    `json:"version"`
	State   string `json:"state"`
	Players []struct {
		ID        string  `json:"id"`
		Name      string  `json:"name"`
		Rating    float64 `json:"rating"`
		Submitted bool    `json:"submitted"`
	} `json:"players"`
	CreatedAt     time.Time  `json:"created_at"`
	AcceptBy      time.Time  `json:"accept_by"`
	SubmitBy      *time.Time `json:"submit_by"`
	SurpriseChaos []struct {
		Kind        string  `json:"kind"`
		AtSec       float64 `json:"at_sec"`
		DurationSec float64 `json:"duration_sec"`
		Target      string  `json:"target"`
		From        string  `json:"from"`
		To          string  `json:"to"`
	} `json:"surprise_chaos"`
	Result *struct {
		Winner *string `json:"winner"`
		Draw   bool    `json:"draw"`
		Reason string  `json:"reason"`
		Sides  []struct {
			PlayerID    string   `json:"player_id"`
			Passed      bool     `json:"passed"`
			Score       int64    `json:"score"`
			FailedAtSec *float64 `json:"failed_at_sec"`
			ErrorRate   float64  `json:"error_rate"`
			Submitted   bool     `json:"submitted"`
			Evaluation  *struct {
				Conditions []struct {
					Name     string  `json:"name"`
					Passed   bool    `json:"passed"`
					Measured float64 `json:"measured"`
					Target   float64 `json:"target"`
					Unit     string  `json:"unit"`
				} `json:"conditions"`
				Error string `json:"error"`
			} `json:"evaluation"`
		} `json:"sides"`
		Ratings []struct {
			PlayerID string  `json:"player_id"`
			Before   float64 `json:"before"`
			After    float64 `json:"after"`
		} `json:"ratings"`
	} `json:"result"`
}

// callAPI sends one API request with the player's token; a problem+json
// answer becomes an error naming its code.
func callAPI(ctx context.Context, o options, method, path string, body any, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(o.server, "/")+path, rd)
	if err != nil {
		return invalidf("--server: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", o.server, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var p struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
			Errors []struct {
				Field  string `json:"field"`
				Reason string `json:"reason"`
			} `json:"errors"`
		}
		_ = json.Unmarshal(raw, &p)
		msg := fmt.Sprintf("%s %s: %s (%s)", method, path, p.Detail, p.Code)
		for _, e := range p.Errors {
			msg += fmt.Sprintf("\n  %s: %s", e.Field, e.Reason)
		}
		if resp.StatusCode < 500 {
			return invalidf("%s", msg)
		}
		return fmt.Errorf("%s", msg)
	}
	return json.Unmarshal(raw, v)
}

func cmdDuel(ctx context.Context, o options, args []string) error {
	if len(args) == 0 {
		return invalidf("duel: name a subcommand: challenge, match, accept, decline, submit, show, list")
	}
	sub, args := args[0], args[1:]
	need := map[string]int{"challenge": 2, "match": 1, "accept": 1, "decline": 1, "submit": 2, "show": 1, "list": 0}
	n, ok := need[sub]
	if !ok {
		return invalidf("duel: unknown subcommand %q", sub)
	}
	if len(args) != n {
		return invalidf("duel %s: takes %d argument(s), got %d", sub, n, len(args))
	}
	if o.token == "" && sub != "show" {
		return invalidf("duel %s: needs a player token (--token or BACKPRESSURE_TOKEN)", sub)
	}
	var d duelDoc
	var err error
	switch sub {
	case "challenge":
		err = callAPI(ctx, o, "POST", "/v1/duels", map[string]any{"opponent": args[0], "level": args[1]}, &d)
	case "match":
		err = callAPI(ctx, o, "POST", "/v1/duels", map[string]any{"level": args[0]}, &d)
	case "accept", "decline":
		err = callAPI(ctx, o, "POST", "/v1/duels/"+url.PathEscape(args[0])+"/"+sub, nil, &d)
	case "submit":
		raw, rerr := os.ReadFile(args[1])
		if rerr != nil {
			return invalidf("duel submit: %v", rerr)
		}
		if !json.Valid(raw) {
			return invalidf("duel submit: %s is not JSON", args[1])
		}
		err = callAPI(ctx, o, "POST", "/v1/duels/"+url.PathEscape(args[0])+"/design", map[string]any{"design": json.RawMessage(raw)}, &d)
	case "show":
		err = callAPI(ctx, o, "GET", "/v1/duels/"+url.PathEscape(args[0]), nil, &d)
	case "list":
		var list struct {
			Duels []duelDoc `json:"duels"`
		}
		var err error
		list.Duels, err = readPages[duelDoc]("/v1/duels", "duels", func(path string, v any) error {
			return callAPI(ctx, o, "GET", path, nil, v)
		})
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(o.stdout, list.Duels)
		}
		if len(list.Duels) == 0 {
			fmt.Fprintln(o.stdout, "no duels")
		}
		for _, d := range list.Duels {
			fmt.Fprintf(o.stdout, "%s  %-10s %-22s %s\n", d.ID, d.State, d.Level, d.versus())
		}
		return nil
	}
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, d)
	}
	printDuel(o.stdout, d)
	return nil
}

func (d duelDoc) versus() string {
	var names []string
	for _, p := range d.Players {
		names = append(names, fmt.Sprintf("%s (%.0f)", p.Name, p.Rating))
	}
	if len(names) == 1 {
		names = append(names, "waiting for a match")
	}
	return strings.Join(names, " vs ")
}

func (d duelDoc) name(id string) string {
	for _, p := range d.Players {
		if p.ID == id {
			return p.Name
		}
	}
	return id
}

// printDuel prints a duel; once it has ended, both verdicts side by side
// and the revealed surprise.
func printDuel(w io.Writer, d duelDoc) {
	fmt.Fprintf(w, "duel %s  %s v%d  [%s]\n%s\n", d.ID, d.Level, d.Version, d.State, d.versus())
	switch d.State {
	case "challenged", "matching":
		fmt.Fprintf(w, "answer by %s\n", d.AcceptBy.UTC().Format(time.RFC3339))
	case "active":
		for _, p := range d.Players {
			in := "waiting for a design"
			if p.Submitted {
				in = "design in"
			}
			fmt.Fprintf(w, "  %-20s %s\n", p.Name, in)
		}
		if d.SubmitBy != nil {
			fmt.Fprintf(w, "designs due by %s\n", d.SubmitBy.UTC().Format(time.RFC3339))
		}
	}
	r := d.Result
	if r == nil {
		return
	}
	switch {
	case r.Winner != nil:
		fmt.Fprintf(w, "winner: %s (%s)\n", d.name(*r.Winner), r.Reason)
	case r.Draw:
		fmt.Fprintf(w, "a draw (%s)\n", r.Reason)
	default:
		fmt.Fprintf(w, "no contest (%s)\n", r.Reason)
	}
	if len(d.SurpriseChaos) == 0 {
		fmt.Fprintln(w, "surprise chaos: none")
	}
	for _, e := range d.SurpriseChaos {
		on := e.Target
		if e.From != "" {
			on = e.From + "→" + e.To
		}
		fmt.Fprintf(w, "surprise chaos: %s at %g s for %g s on %s\n", e.Kind, e.AtSec, e.DurationSec, on)
	}
	if len(r.Sides) == 0 {
		return
	}
	rows := [][]string{{""}, {"verdict"}, {"score"}, {"failed at"}, {"error rate"}}
	condRow := map[string]int{}
	for _, s := range r.Sides {
		rows[0] = append(rows[0], d.name(s.PlayerID))
		verdict := "fails"
		switch {
		case !s.Submitted:
			verdict = "no design"
		case s.Evaluation == nil:
			verdict = "not run"
		case s.Passed:
			verdict = "passes"
		}
		rows[1] = append(rows[1], verdict)
		rows[2] = append(rows[2], fmt.Sprint(s.Score))
		failed := "-"
		if s.FailedAtSec != nil {
			failed = fmt.Sprintf("%g s", *s.FailedAtSec)
		}
		rows[3] = append(rows[3], failed)
		rows[4] = append(rows[4], fmt.Sprintf("%.2f%%", 100*s.ErrorRate))
		if s.Evaluation == nil {
			continue
		}
		for _, c := range s.Evaluation.Conditions {
			i, ok := condRow[c.Name]
			if !ok {
				i = len(rows)
				condRow[c.Name] = i
				rows = append(rows, []string{c.Name})
			}
			for len(rows[i]) < len(rows[0])-1 {
				rows[i] = append(rows[i], "")
			}
			mark := "✗"
			if c.Passed {
				mark = "✓"
			}
			rows[i] = append(rows[i], fmt.Sprintf("%s %.4g / %.4g %s", mark, c.Measured, c.Target, c.Unit))
		}
	}
	if len(r.Ratings) > 0 {
		row := []string{"rating"}
		for _, s := range r.Sides {
			for _, rc := range r.Ratings {
				if rc.PlayerID == s.PlayerID {
					row = append(row, fmt.Sprintf("%.0f → %.0f", rc.Before, rc.After))
				}
			}
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w)
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i == 0 {
				fmt.Fprintf(&line, "%-12s", cell)
				continue
			}
			fmt.Fprintf(&line, "  %-28s", cell)
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
}

func cmdRatings(ctx context.Context, o options) error {
	var page struct {
		Total   int `json:"total"`
		Entries []struct {
			Rank       int64   `json:"rank"`
			PlayerName string  `json:"player_name"`
			Rating     float64 `json:"rating"`
			Deviation  float64 `json:"deviation"`
			Duels      int     `json:"duels"`
			Wins       int     `json:"wins"`
			Losses     int     `json:"losses"`
			Draws      int     `json:"draws"`
		} `json:"entries"`
	}
	if err := callAPI(ctx, o, "GET", "/v1/ratings?limit=100", nil, &page); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, page)
	}
	fmt.Fprintf(o.stdout, "ratings (%d players):\n", page.Total)
	for _, e := range page.Entries {
		fmt.Fprintf(o.stdout, "%4d  %-32s %6.0f ± %-4.0f %3d duels  %d-%d-%d\n", e.Rank, e.PlayerName, e.Rating, 2*e.Deviation,
			e.Duels, e.Wins, e.Losses, e.Draws)
	}
	return nil
}
