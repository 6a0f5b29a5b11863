package main

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

type seasonSummary struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Current  bool      `json:"current"`
}

type boardPage struct {
	Total   int64 `json:"total"`
	Entries []struct {
		Rank       int64  `json:"rank"`
		PlayerID   string `json:"player_id"`
		PlayerName string `json:"player_name"`
		Score      int64  `json:"score"`
	} `json:"entries"`
}

type playerProfile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Role    string `json:"role"`
	Seasons []struct {
		SeasonID string `json:"season_id"`
		Name     string `json:"name"`
		Current  bool   `json:"current"`
		Rank     int64  `json:"rank"`
		Score    int64  `json:"score"`
		Total    int64  `json:"total"`
	} `json:"seasons"`
	Events []struct {
		EventID    string    `json:"event_id"`
		Title      string    `json:"title"`
		Rank       int64     `json:"rank"`
		Score      int64     `json:"score"`
		Passed     bool      `json:"passed"`
		Total      int64     `json:"total"`
		FinishedAt time.Time `json:"finished_at"`
	} `json:"events"`
}

// seasonState is how a season stands at now.
func seasonState(s seasonSummary, now time.Time) string {
	switch {
	case s.Current:
		return "current"
	case s.StartsAt.After(now):
		return "next"
	}
	return "final"
}

// cmdSeasons runs "seasons", "season ID" and "player ID".
func cmdSeasons(ctx context.Context, o options, cmd string, pos []string) error {
	switch cmd {
	case "seasons":
		if len(pos) != 0 {
			return invalidf("seasons: takes no arguments")
		}
		var list struct {
			Seasons []seasonSummary `json:"seasons"`
		}
		var err error
		list.Seasons, err = readPages[seasonSummary]("/v1/seasons", "seasons", func(path string, v any) error {
			return getJSON(ctx, o.server, path, v)
		})
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(o.stdout, list.Seasons)
		}
		if len(list.Seasons) == 0 {
			fmt.Fprintln(o.stdout, "no seasons")
		}
		now := time.Now()
		for _, s := range list.Seasons {
			fmt.Fprintf(o.stdout, "%-18s %-7s %s → %s  %s\n", s.ID, seasonState(s, now),
				s.StartsAt.UTC().Format("2006-01-02 15:04"), s.EndsAt.UTC().Format("2006-01-02 15:04"), s.Name)
		}
		return nil
	case "season":
		if len(pos) != 1 {
			return invalidf("season: name one season id")
		}
		path := "/v1/seasons/" + url.PathEscape(pos[0])
		var s seasonSummary
		if err := getJSON(ctx, o.server, path, &s); err != nil {
			return err
		}
		var page boardPage
		if err := getJSON(ctx, o.server, path+"/leaderboard?limit=100", &page); err != nil {
			return err
		}
		if o.json {
			return writeJSON(o.stdout, map[string]any{"season": s, "leaderboard": page})
		}
		title := "standings"
		if seasonState(s, time.Now()) == "final" {
			title = "final ranks"
		}
		fmt.Fprintf(o.stdout, "%s  [%s]\n%s → %s\n\n%s (%d players):\n", s.Name, seasonState(s, time.Now()),
			s.StartsAt.UTC().Format(time.RFC3339), s.EndsAt.UTC().Format(time.RFC3339), title, page.Total)
		for _, e := range page.Entries {
			fmt.Fprintf(o.stdout, "%4d  %-32s %8d\n", e.Rank, e.PlayerName, e.Score)
		}
		if int64(len(page.Entries)) < page.Total {
			fmt.Fprintf(o.stdout, "… %d more\n", page.Total-int64(len(page.Entries)))
		}
		return nil
	}
	if len(pos) != 1 {
		return invalidf("player: name one player id")
	}
	var p playerProfile
	if err := getJSON(ctx, o.server, "/v1/players/"+url.PathEscape(pos[0]), &p); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, p)
	}
	fmt.Fprintf(o.stdout, "%s  (%s)\n\nseasons:\n", p.Name, p.Role)
	if len(p.Seasons) == 0 {
		fmt.Fprintln(o.stdout, "  none yet")
	}
	for _, s := range p.Seasons {
		mark := ""
		if s.Current {
			mark = "  (current)"
		}
		fmt.Fprintf(o.stdout, "  %-18s rank %d of %d  score %d%s\n", s.Name, s.Rank, s.Total, s.Score, mark)
	}
	fmt.Fprintln(o.stdout, "\nevents:")
	if len(p.Events) == 0 {
		fmt.Fprintln(o.stdout, "  none yet")
	}
	for _, e := range p.Events {
		verdict := "fails"
		if e.Passed {
			verdict = "passes"
		}
		fmt.Fprintf(o.stdout, "  %s  %-32s rank %d of %d  score %d %s\n", e.FinishedAt.UTC().Format("2006-01-02"), e.Title, e.Rank, e.Total, e.Score, verdict)
	}
	return nil
}
