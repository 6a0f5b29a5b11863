package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// defaultServer is where events are read from without --server or
// BACKPRESSURE_SERVER.
const defaultServer = "http://localhost:8080"

type eventSummary struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	Briefing     string     `json:"briefing"`
	Phase        string     `json:"phase"`
	StartsAt     time.Time  `json:"starts_at"`
	EndsAt       time.Time  `json:"ends_at"`
	AttemptLimit int        `json:"attempt_limit"`
	JoinRequired bool       `json:"join_required"`
	MaxEntrants  int        `json:"max_entrants"`
	Final        string     `json:"final"`
	Entrants     int        `json:"entrants"`
	Level        *string    `json:"level"`
	HiddenChaos  any        `json:"hidden_chaos"`
	FinishedAt   *time.Time `json:"finished_at"`
}

type eventStandings struct {
	Final   bool `json:"final"`
	Total   int  `json:"total"`
	Entries []struct {
		Rank       int64  `json:"rank"`
		PlayerName string `json:"player_name"`
		Score      int64  `json:"score"`
		Passed     bool   `json:"passed"`
		Attempts   int    `json:"attempts"`
	} `json:"entries"`
}

// getJSON reads one API document; a problem+json answer becomes its detail.
func getJSON(ctx context.Context, server, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(server, "/")+path, nil)
	if err != nil {
		return invalidf("--server: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var p struct {
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(body, &p)
		if resp.StatusCode == http.StatusNotFound {
			return invalidf("%s: %s", path, p.Detail)
		}
		return fmt.Errorf("%s: %s: %s", path, resp.Status, p.Detail)
	}
	return json.Unmarshal(body, v)
}

// maxListPages bounds how many pages of 100 a command reads from one list
// route.
const maxListPages = 100

// readPages reads the items under key of every page of the list route at
// path, in pages of 100 following each page's next, with get (getJSON or
// callAPI); at most maxListPages pages.
func readPages[T any](path, key string, get func(path string, v any) error) ([]T, error) {
	out := []T{}
	cursor := ""
	for range maxListPages {
		var page map[string]json.RawMessage
		if err := get(path+"?limit=100&cursor="+url.QueryEscape(cursor), &page); err != nil {
			return nil, err
		}
		var items []T
		if err := json.Unmarshal(page[key], &items); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, key, err)
		}
		out = append(out, items...)
		if err := json.Unmarshal(page["next"], &cursor); err != nil || cursor == "" {
			break
		}
	}
	return out, nil
}

func cmdEvents(ctx context.Context, o options) error {
	var list struct {
		Events []eventSummary `json:"events"`
	}
	var err error
	list.Events, err = readPages[eventSummary]("/v1/events", "events", func(path string, v any) error {
		return getJSON(ctx, o.server, path, v)
	})
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, list.Events)
	}
	if len(list.Events) == 0 {
		fmt.Fprintln(o.stdout, "no events")
	}
	for _, e := range list.Events {
		fmt.Fprintf(o.stdout, "%s  %-9s %s → %s  %3d entrants  %s\n", e.ID, e.Phase,
			e.StartsAt.UTC().Format("2006-01-02 15:04"), e.EndsAt.UTC().Format("2006-01-02 15:04"), e.Entrants, e.Title)
	}
	return nil
}

func cmdEvent(ctx context.Context, o options, id string) error {
	var e eventSummary
	path := "/v1/events/" + url.PathEscape(id)
	if err := getJSON(ctx, o.server, path, &e); err != nil {
		return err
	}
	var st eventStandings
	if err := getJSON(ctx, o.server, path+"/standings", &st); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, map[string]any{"event": e, "standings": st})
	}
	level := "(revealed at the start)"
	if e.Level != nil {
		level = *e.Level
	}
	rules := []string{"final design: " + e.Final}
	if e.AttemptLimit > 0 {
		rules = append(rules, fmt.Sprintf("%d attempts", e.AttemptLimit))
	}
	if e.JoinRequired {
		rules = append(rules, "join before submitting")
	}
	if e.MaxEntrants > 0 {
		rules = append(rules, fmt.Sprintf("at most %d entrants", e.MaxEntrants))
	}
	fmt.Fprintf(o.stdout, "%s  [%s]\nlevel: %s\n%s → %s\nrules: %s\n\n%s\n\n", e.Title, e.Phase, level,
		e.StartsAt.UTC().Format(time.RFC3339), e.EndsAt.UTC().Format(time.RFC3339), strings.Join(rules, ", "), e.Briefing)
	if e.Phase == "finished" {
		chaos, _ := json.Marshal(e.HiddenChaos)
		fmt.Fprintf(o.stdout, "hidden chaos: %s\n\n", chaos)
	}
	title := "live standings"
	if st.Final {
		title = "final standings"
	}
	fmt.Fprintf(o.stdout, "%s (%d entrants):\n", title, st.Total)
	for _, en := range st.Entries {
		verdict := "fails"
		if en.Passed {
			verdict = "passes"
		}
		fmt.Fprintf(o.stdout, "%4d  %-32s %8d  %-6s %d attempts\n", en.Rank, en.PlayerName, en.Score, verdict, en.Attempts)
	}
	return nil
}
