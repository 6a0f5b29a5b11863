package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// checkReport is what the database check found; Problems empty means the
// database holds exactly what the server acknowledged.
type checkReport struct {
	AckedChecked  int      `json:"acked_checked"`
	RefusedKeys   int      `json:"refused_keys"`
	UnknownStored int      `json:"unknown_outcomes_stored"`
	RanksChecked  int      `json:"ranks_checked"`
	Invariants    []string `json:"invariants"`
	Problems      []string `json:"problems"`
}

func (c *checkReport) print(w io.Writer) {
	fmt.Fprintf(w, "database check: %d acknowledged submissions stored exactly once, %d refused keys absent, %d unknown outcomes later found stored, %d ranks compared\n",
		c.AckedChecked, c.RefusedKeys, c.UnknownStored, c.RanksChecked)
	for _, inv := range c.Invariants {
		fmt.Fprintf(w, "  ok: %s\n", inv)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(w, "  PROBLEM: %s\n", p)
	}
}

func cmdCheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	db := fs.String("db", "", "database URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := checkDB(ctx, *db, "", nil)
	if err != nil {
		return err
	}
	c.print(stdout)
	if len(c.Problems) > 0 {
		return fmt.Errorf("FAILED: %d problems", len(c.Problems))
	}
	fmt.Fprintln(stdout, "OK")
	return nil
}

// invariants are queries that must return 0 on a consistent database,
// whatever happened to the server (crash included).
//
// An invariant naming a table in needs is skipped on a database without it
// (a build from before the table), so one loadgen checks old and new builds.
var invariants = []struct{ name, sql, needs string }{
	{"every submission has its verdict (no half-written submission)",
		`SELECT count(*) FROM submissions WHERE result IS NULL`, ""},
	{"every idempotency record points at its player's submission",
		`SELECT count(*) FROM submission_requests r LEFT JOIN submissions s ON s.id = r.submission_id
		 WHERE s.id IS NULL OR s.player_id <> r.player_id`, ""},
	{"every board entry is its player's passing submission with that score and time",
		`SELECT count(*) FROM board_entries e JOIN boards b ON b.id = e.board_id AND b.id <> 0 AND b.slug IS NOT NULL
		 LEFT JOIN submissions s ON s.id = e.submission_id
		 WHERE s.id IS NULL OR s.player_id <> e.player_id OR NOT s.passed OR s.score <> e.score
		    OR s.created_at <> e.achieved_at OR s.slug <> b.slug OR s.version <> b.version`, ""},
	{"every level-board entry is its player's best (highest score, earliest reach)",
		`WITH best AS (
			SELECT DISTINCT ON (s.player_id, l.board_id) l.board_id, s.player_id, s.score, s.created_at
			FROM submissions s JOIN levels l USING (slug, version) WHERE s.passed
			ORDER BY s.player_id, l.board_id, s.score DESC, s.created_at)
		 SELECT count(*) FROM best FULL JOIN (SELECT * FROM board_entries WHERE board_id IN (SELECT board_id FROM levels)) e USING (board_id, player_id)
		 WHERE e.score IS DISTINCT FROM best.score OR e.achieved_at IS DISTINCT FROM best.created_at`, ""},
	{"every global total is the sum of the player's current-version bests",
		`WITH cur AS (
			SELECT e.player_id, sum(e.score) AS total FROM board_entries e
			JOIN levels l ON l.board_id = e.board_id AND l.is_current GROUP BY e.player_id)
		 SELECT count(*) FROM cur FULL JOIN (SELECT * FROM board_entries WHERE board_id = 0) g USING (player_id)
		 WHERE g.score IS DISTINCT FROM cur.total`, ""},
	{"every season total is the sum of the player's season bests, reached at the latest of them",
		`WITH t AS (
			SELECT s.board_id, b.player_id, sum(b.score) AS total, max(b.achieved_at) AS at
			FROM season_bests b JOIN seasons s ON s.id = b.season_id GROUP BY s.board_id, b.player_id)
		 SELECT count(*) FROM t FULL JOIN (SELECT * FROM board_entries WHERE board_id IN (SELECT board_id FROM seasons)) e
			USING (board_id, player_id)
		 WHERE e.score IS DISTINCT FROM t.total OR e.achieved_at IS DISTINCT FROM t.at`, "season_bests"},
	{"every season best is a passing submission of that player on that level, with that score and time",
		`SELECT count(*) FROM season_bests b LEFT JOIN submissions s ON s.id = b.submission_id
		 WHERE s.id IS NULL OR s.player_id <> b.player_id OR s.slug <> b.slug OR NOT s.passed
		    OR s.score <> b.score OR s.created_at <> b.achieved_at`, "season_bests"},
	{"every rank bucket counts exactly the entries in its key range",
		`WITH b AS (
			SELECT id, board_id, lo_neg_score, lo_achieved_at, lo_player_id, n,
				lead(lo_neg_score) OVER w AS hi_ns, lead(lo_achieved_at) OVER w AS hi_at, lead(lo_player_id) OVER w AS hi_pid
			FROM board_buckets
			WINDOW w AS (PARTITION BY board_id ORDER BY lo_neg_score, lo_achieved_at, lo_player_id))
		 SELECT count(*) FROM b WHERE n <> (
			SELECT count(*) FROM board_entries e WHERE e.board_id = b.board_id
			  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
			  AND (b.hi_ns IS NULL OR (e.neg_score, e.achieved_at, e.player_id) < (b.hi_ns, b.hi_at, b.hi_pid)))`, ""},
	{"bucket counts add up to each board's size",
		`SELECT count(*) FROM (SELECT board_id, sum(n) AS n FROM board_buckets GROUP BY board_id) b
		 FULL JOIN (SELECT board_id, count(*) AS n FROM board_entries GROUP BY board_id) e USING (board_id)
		 WHERE coalesce(b.n, 0) <> coalesce(e.n, 0)`, ""},
}

// checkDB checks the database invariants and, given the client's outcomes,
// that every acknowledged submission is stored exactly once under its key,
// no refused one is stored, and (given the server URL) that the API's ranks
// for a sample of the run's players agree with ranks computed from the
// stored rows.
func checkDB(ctx context.Context, dbURL, serverURL string, outs []outcome) (*checkReport, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	c := &checkReport{}
	for _, inv := range invariants {
		if inv.needs != "" {
			var present bool
			if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, inv.needs).Scan(&present); err != nil {
				return nil, err
			}
			if !present {
				continue
			}
		}
		var n int
		if err := conn.QueryRow(ctx, inv.sql).Scan(&n); err != nil {
			return nil, fmt.Errorf("%s: %w", inv.name, err)
		}
		if n != 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %d violations", inv.name, n))
		} else {
			c.Invariants = append(c.Invariants, inv.name)
		}
	}
	if outs == nil {
		return c, nil
	}
	// The run's keys, as the database has them.
	players := map[string]bool{}
	for _, o := range outs {
		players[o.Player] = true
	}
	ids := make([]string, 0, len(players))
	for p := range players {
		ids = append(ids, p)
	}
	byKey := map[[2]string]string{}
	rows, err := conn.Query(ctx, `SELECT player_id::text, idempotency_key, submission_id::text FROM submission_requests WHERE player_id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p, k, id string
		if err := rows.Scan(&p, &k, &id); err != nil {
			return nil, err
		}
		byKey[[2]string{p, k}] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var subs, unkeyed int
	if err := conn.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM submission_requests r WHERE r.submission_id = s.id))
		FROM submissions s WHERE s.player_id = ANY($1::uuid[])`, ids).Scan(&subs, &unkeyed); err != nil {
		return nil, err
	}
	if unkeyed > 0 {
		c.Problems = append(c.Problems, fmt.Sprintf("%d submissions of the run's players have no idempotency key (stored twice?)", unkeyed))
	}
	issued := map[[2]string]bool{}
	for _, o := range outs {
		k := [2]string{o.Player, o.Key}
		issued[k] = true
		id, ok := byKey[k]
		switch {
		case o.Status == 201:
			c.AckedChecked++
			if !ok || id != o.ID {
				c.Problems = append(c.Problems, fmt.Sprintf("acknowledged submission %s (key %s) is not stored under its key (found %q)", o.ID, o.Key, id))
			}
			if o.Mismatch {
				c.Problems = append(c.Problems, fmt.Sprintf("key %s was answered with two different submissions", o.Key))
			}
		case o.Status == 0:
			if ok {
				c.UnknownStored++
			}
		default:
			c.RefusedKeys++
			if ok {
				c.Problems = append(c.Problems, fmt.Sprintf("key %s was refused with %d but a submission is stored", o.Key, o.Status))
			}
		}
	}
	for k := range byKey {
		if !issued[k] {
			c.Problems = append(c.Problems, fmt.Sprintf("a stored submission has key %s, which the client never sent", k[1]))
		}
	}
	if subs != len(byKey) {
		c.Problems = append(c.Problems, fmt.Sprintf("%d submissions stored for %d keys", subs, len(byKey)))
	}
	if serverURL != "" {
		if err := checkRanks(ctx, conn, serverURL, ids, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkRanks compares the API's top page of every board the run touched
// with ranks computed by counting stored rows.
func checkRanks(ctx context.Context, conn *pgx.Conn, serverURL string, players []string, c *checkReport) error {
	rows, err := conn.Query(ctx, `
		SELECT DISTINCT coalesce(b.slug, ''), coalesce(b.version, 0) FROM board_entries e JOIN boards b ON b.id = e.board_id
		WHERE e.player_id = ANY($1::uuid[]) AND (b.id = 0 OR b.slug IS NOT NULL)`, players)
	if err != nil {
		return err
	}
	type board struct {
		slug    string
		version int
	}
	boards, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (board, error) {
		var b board
		return b, r.Scan(&b.slug, &b.version)
	})
	if err != nil {
		return err
	}
	for _, b := range boards {
		path := "/v1/leaderboard?limit=100"
		if b.slug != "" {
			path = "/v1/challenges/" + url.PathEscape(b.slug) + "/leaderboard?limit=100&version=" + fmt.Sprint(b.version)
		}
		resp, err := http.Get(strings.TrimRight(serverURL, "/") + path)
		if err != nil {
			return err
		}
		var page boardPage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		var total int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM board_entries e JOIN boards b ON b.id = e.board_id
			WHERE coalesce(b.slug, '') = $1 AND coalesce(b.version, 0) = $2 AND (b.id = 0 OR b.slug IS NOT NULL)`, b.slug, b.version).Scan(&total); err != nil {
			return err
		}
		if total != page.Total {
			c.Problems = append(c.Problems, fmt.Sprintf("board %q v%d: API total %d, %d rows", b.slug, b.version, page.Total, total))
		}
		for _, e := range page.Entries {
			var rank, score int64
			err := conn.QueryRow(ctx, `
				SELECT 1 + (SELECT count(*) FROM board_entries o WHERE o.board_id = me.board_id
					AND (o.neg_score, o.achieved_at, o.player_id) < (me.neg_score, me.achieved_at, me.player_id)), me.score
				FROM board_entries me JOIN boards b ON b.id = me.board_id
				WHERE coalesce(b.slug, '') = $1 AND coalesce(b.version, 0) = $2 AND me.player_id = $3
				  AND (b.id = 0 OR b.slug IS NOT NULL)`,
				b.slug, b.version, e.PlayerID).Scan(&rank, &score)
			if err != nil {
				return err
			}
			c.RanksChecked++
			if rank != e.Rank || score != e.Score {
				c.Problems = append(c.Problems, fmt.Sprintf("board %q: API says %s is #%d with %d; rows say #%d with %d",
					b.slug, e.PlayerID, e.Rank, e.Score, rank, score))
			}
		}
	}
	return nil
}

// boardPage is what the load generator reads of a leaderboard page.
type boardPage struct {
	Entries []struct {
		Rank     int64  `json:"rank"`
		PlayerID string `json:"player_id"`
		Score    int64  `json:"score"`
	} `json:"entries"`
	Total int64 `json:"total"`
}
