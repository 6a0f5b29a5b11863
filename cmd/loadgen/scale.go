package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/store/pgstore"
)

// seedToken is seeded player i's bearer token: the seed stores only its
// hash (computed the same way in SQL), and the scale run recomputes it to
// act as that player.
func seedToken(i int) string {
	sum := sha256.Sum256([]byte("scale-" + strconv.Itoa(i)))
	return "bp_" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// seedPlayerID is seeded player i's id, md5('scale' || i)::uuid in the
// seed's SQL.
func seedPlayerID(i int) uuid.UUID {
	return uuid.UUID(md5.Sum([]byte("scale" + strconv.Itoa(i))))
}

// seedPlayers copies n players into the database as the server would store
// them: names s1..sn, both name keys of the current rule (so no replica
// rekeys them in the background while the reads are timed) and the hash of
// seedToken(i).
func seedPlayers(ctx context.Context, conn *pgx.Conn, n int) error {
	now := time.Now()
	i := 0
	rows := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		name := "s" + strconv.Itoa(i)
		hash := sha256.Sum256([]byte(seedToken(i)))
		return []any{seedPlayerID(i), name, game.NameKey(name), game.NameLowerKey(name), "player", hash[:], now}, nil
	})
	_, err := conn.CopyFrom(ctx, pgx.Identifier{"players"},
		[]string{"id", "name", "name_key", "name_lower_key", "role", "token_hash", "created_at"}, rows)
	return err
}

// seedSQL gives each of the $1 seeded players one passing submission on the
// current version of level $2 and an entry on its board (scores 0..999: a
// thousand players per score, times spread over ~1.4 hours), and a global
// board entry whose total stands for the sum over 20 levels (0..19,980).
// Other level boards are not populated: the global totals are written
// directly, which is what the reads measured here see.
var seedSQL = []string{
	`INSERT INTO submissions (id, player_id, slug, version, design, result, passed, score, created_at)
	 SELECT md5('scale-sub' || i)::uuid, md5('scale' || i)::uuid, l.slug, l.version, '{}', '{}', true, i % 1000,
	        '2025-01-01'::timestamptz + (i % 5000) * interval '1 second'
	 FROM generate_series(1, $1::int) i, levels l WHERE l.slug = $2 AND l.is_current`,
	`INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
	 SELECT l.board_id, s.player_id, s.score, s.created_at, s.id
	 FROM submissions s JOIN levels l USING (slug, version)
	 WHERE l.slug = $1 AND l.is_current AND s.player_id IN (SELECT id FROM players WHERE name LIKE 's%')`,
	`INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
	 SELECT 0, s.player_id, (hashtext(s.player_id::text) & 1048575) % 19981, s.created_at, s.id
	 FROM submissions s JOIN levels l USING (slug, version)
	 WHERE l.slug = $1 AND l.is_current AND s.player_id IN (SELECT id FROM players WHERE name LIKE 's%')`,
}

func cmdSeed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	db := fs.String("db", "", "database URL (a server has migrated it and loaded the campaign)")
	players := fs.Int("players", 1_000_000, "players to seed")
	slug := fs.String("level", "first-request", "level whose board gets every player")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	conn, err := pgx.Connect(ctx, *db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Without triggers, which cost more than the rows at a million: the rows
	// meet their foreign keys by construction, and the season trigger would
	// count nothing in a database with no season.
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		return fmt.Errorf("seed without triggers (needs a superuser): %w", err)
	}
	t := time.Now()
	if err := seedPlayers(ctx, conn, *players); err != nil {
		return fmt.Errorf("seed players: %w", err)
	}
	fmt.Fprintf(stdout, "seed players: %v\n", time.Since(t).Round(time.Millisecond))
	for i, args := range [][]any{{*players, *slug}, {*slug}, {*slug}} {
		t = time.Now()
		if _, err := conn.Exec(ctx, seedSQL[i], args...); err != nil {
			return fmt.Errorf("seed step %d: %w", i+1, err)
		}
		fmt.Fprintf(stdout, "seed step %d: %v\n", i+1, time.Since(t).Round(time.Millisecond))
	}
	t = time.Now()
	store, err := pgstore.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.RebuildRanks(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuild ranks: %v\n", time.Since(t).Round(time.Millisecond))
	t = time.Now()
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "vacuum analyze: %v\n", time.Since(t).Round(time.Millisecond))
	fmt.Fprintf(stdout, "seeded %d players on %s and the global board in %v\n", *players, *slug, time.Since(start).Round(time.Second))
	return nil
}

type scaleResult struct {
	Name   string  `json:"name"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	Target float64 `json:"target_ms"`
}

func cmdScale(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	urls := fs.String("url", "", "comma-separated base URLs of the server replicas")
	db := fs.String("db", "", "database URL")
	players := fs.Int("players", 1_000_000, "players seeded")
	slug := fs.String("level", "first-request", "seeded level")
	n := fs.Int("n", 300, "requests per measurement")
	enforce := fs.Bool("enforce-targets", false, "fail when a p99 misses its target")
	jsonOut := fs.String("json", "", "write the results as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	replicas := strings.Split(*urls, ",")
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	get := func(base, path, token string, v any) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != 200 {
			return resp.StatusCode, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, raw)
		}
		if v != nil {
			return 200, json.Unmarshal(raw, v)
		}
		return 200, nil
	}
	conn, err := pgx.Connect(ctx, *db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// The last player on each board, by the board's own order.
	lastOf := func(boardSQL string) (int, error) {
		var name string
		err := conn.QueryRow(ctx, `SELECT p.name FROM board_entries e JOIN players p ON p.id = e.player_id
			WHERE e.board_id = (`+boardSQL+`) ORDER BY e.neg_score DESC, e.achieved_at DESC, e.player_id DESC LIMIT 1`, *slug).Scan(&name)
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(strings.TrimPrefix(name, "s"))
	}
	lastLevel, err := lastOf(`SELECT board_id FROM levels WHERE slug = $1 AND is_current`)
	if err != nil {
		return fmt.Errorf("last player: %w", err)
	}
	lastGlobal, err := lastOf(`SELECT 0 WHERE $1 <> ''`)
	if err != nil {
		return err
	}
	var total int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM board_entries WHERE board_id = (SELECT board_id FROM levels WHERE slug = $1 AND is_current)`, *slug).Scan(&total); err != nil {
		return err
	}

	type page = boardPage
	rng := rand.New(rand.NewPCG(1, 2))
	var results []scaleResult
	var failures []string
	measure := func(name string, target time.Duration, fn func(i int) error) error {
		// Warm up the connection and the caches like a running server's.
		for i := range 10 {
			if err := fn(i); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		ds := make([]time.Duration, 0, *n)
		for i := range *n {
			start := time.Now()
			if err := fn(i); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		r := scaleResult{Name: name, P50MS: ms(ds[len(ds)/2]), P99MS: ms(ds[len(ds)*99/100]), Target: ms(target)}
		results = append(results, r)
		verdict := "met"
		if ds[len(ds)*99/100] > target {
			verdict = "MISSED"
			failures = append(failures, fmt.Sprintf("%s: p99 %.2f ms > %.0f ms", name, r.P99MS, r.Target))
		}
		fmt.Fprintf(stdout, "%-46s p50 %7.2f ms  p99 %7.2f ms  (target p99 < %.0f ms: %s)\n", name, r.P50MS, r.P99MS, r.Target, verdict)
		return nil
	}
	base := replicas[0]
	levelBoard := "/v1/challenges/" + *slug + "/leaderboard"
	randomPlayers := make([]int, *n+10)
	for i := range randomPlayers {
		randomPlayers[i] = 1 + rng.IntN(*players)
	}
	fmt.Fprintf(stdout, "board %s: %d players; %d requests per figure, one at a time, through %s\n", *slug, total, *n, base)
	steps := []struct {
		name   string
		target time.Duration
		fn     func(i int) error
	}{
		{"top-100 page, level board", 5 * time.Millisecond, func(int) error {
			var p page
			_, err := get(base, levelBoard+"?limit=100", "", &p)
			if err == nil && (len(p.Entries) != 100 || p.Total != total) {
				err = fmt.Errorf("page of %d, total %d", len(p.Entries), p.Total)
			}
			return err
		}},
		{"top-100 page, global board", 5 * time.Millisecond, func(int) error {
			_, err := get(base, "/v1/leaderboard?limit=100", "", nil)
			return err
		}},
		{"exact rank of the last player (level)", 10 * time.Millisecond, func(int) error {
			var p page
			_, err := get(base, levelBoard+"?around=me&limit=1", seedToken(lastLevel), &p)
			if err == nil && (len(p.Entries) != 1 || p.Entries[0].Rank != total) {
				err = fmt.Errorf("last player's rank %v, want %d", p.Entries, total)
			}
			return err
		}},
		{"exact rank of the last player (global)", 10 * time.Millisecond, func(int) error {
			_, err := get(base, "/v1/leaderboard?around=me&limit=1", seedToken(lastGlobal), nil)
			return err
		}},
		{"exact rank of a random player (level)", 10 * time.Millisecond, func(i int) error {
			_, err := get(base, levelBoard+"?around=me&limit=1", seedToken(randomPlayers[i]), nil)
			return err
		}},
		{"100 around a random player (level)", 10 * time.Millisecond, func(i int) error {
			_, err := get(base, levelBoard+"?around=me&limit=100", seedToken(randomPlayers[i]), nil)
			return err
		}},
		{"100 around the last player (level)", 10 * time.Millisecond, func(int) error {
			_, err := get(base, levelBoard+"?around=me&limit=100", seedToken(lastLevel), nil)
			return err
		}},
		{"100 around a random player (global)", 10 * time.Millisecond, func(i int) error {
			_, err := get(base, "/v1/leaderboard?around=me&limit=100", seedToken(randomPlayers[i]), nil)
			return err
		}},
	}
	for _, st := range steps {
		if err := measure(st.name, st.target, st.fn); err != nil {
			return err
		}
	}

	// A new best, written through one replica, is in the next read on
	// every replica: the lowest-ranked players submit a real design.
	lows, err := conn.Query(ctx, `SELECT p.name FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = (SELECT board_id FROM levels WHERE slug = $1 AND is_current) AND e.score = 0
		ORDER BY e.neg_score DESC, e.achieved_at DESC LIMIT 20`, *slug)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(lows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var writeDs []time.Duration
	stale := 0
	for k, name := range names {
		i, _ := strconv.Atoi(strings.TrimPrefix(name, "s"))
		tok := seedToken(i)
		body := strings.NewReader(`{"design": {"components": [{"id": "app", "type": "app_service", "params": {"replicas": 2}}, {"id": "db", "type": "database"}], "edges": [{"from": "app", "to": "db"}]}}`)
		req, _ := http.NewRequestWithContext(ctx, "POST", replicas[k%len(replicas)]+"/v1/challenges/"+*slug+"/submissions", body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		var rec struct {
			Submission struct {
				Score  int64 `json:"score"`
				Passed bool  `json:"passed"`
			} `json:"submission"`
			Rank *int64 `json:"rank"`
		}
		err = json.NewDecoder(resp.Body).Decode(&rec)
		resp.Body.Close()
		writeDs = append(writeDs, time.Since(start))
		if err != nil || resp.StatusCode != 201 || rec.Rank == nil || !rec.Submission.Passed {
			return fmt.Errorf("submission of %s: %d %+v %v", name, resp.StatusCode, rec, err)
		}
		for _, replica := range replicas {
			var p page
			if _, err := get(replica, levelBoard+"?around=me&limit=1", tok, &p); err != nil {
				return err
			}
			if len(p.Entries) != 1 || p.Entries[0].Score != rec.Submission.Score || p.Entries[0].Rank != *rec.Rank {
				stale++
				failures = append(failures, fmt.Sprintf("%s read %v after the write answered rank %d score %d", replica, p.Entries, *rec.Rank, rec.Submission.Score))
			}
		}
	}
	slices.Sort(writeDs)
	fmt.Fprintf(stdout, "new best through replica k%%%d, read on all %d replicas at once: %d of %d reads stale; improving submission p50 %.2f ms, max %.2f ms (n=%d)\n",
		len(replicas), len(replicas), stale, len(names)*len(replicas), ms(writeDs[len(writeDs)/2]), ms(writeDs[len(writeDs)-1]), len(writeDs))
	if *jsonOut != "" {
		raw, _ := json.MarshalIndent(results, "", "  ")
		if err := writeFile(*jsonOut, raw); err != nil {
			return err
		}
	}
	if stale > 0 || (*enforce && len(failures) > 0) {
		return fmt.Errorf("FAILED:\n  %s", strings.Join(failures, "\n  "))
	}
	if len(failures) > 0 {
		fmt.Fprintf(stdout, "targets missed (not enforced):\n  %s\n", strings.Join(failures, "\n  "))
	}
	fmt.Fprintln(stdout, "OK")
	return nil
}
