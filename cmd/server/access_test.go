package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestAccess: what a player must not be able to do, one case each.
func TestAccess(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	alice, bob := s.newPlayer(t, "alice"), s.newPlayer(t, "bob")
	submit := "/v1/challenges/" + tutorial + "/submissions"
	bobsFirst := s.submit(t, bob, tutorial, design(2))
	doc := levelDoc(t, s, "alices-level")

	tests := []struct {
		name   string
		rq     req
		status int
	}{
		{"a player cannot upload a level", req{method: "POST", path: "/v1/challenges", token: alice.token, body: doc}, 403},
		{"a player cannot change a level", req{method: "PUT", path: "/v1/challenges/" + tutorial, token: alice.token, body: levelDoc(t, s, tutorial)}, 403},
		{"a player cannot grant themselves a role", req{method: "PUT", path: "/v1/players/" + alice.ID + "/role", token: alice.token, body: map[string]any{"role": "admin"}}, 403},
		{"a player cannot submit a score", req{method: "POST", path: submit, token: alice.token, body: map[string]any{"design": design(2), "score": 1 << 40}}, 400},
		{"a player cannot submit a result", req{method: "POST", path: submit, token: alice.token, body: map[string]any{"design": design(2), "passed": true, "evaluation": map[string]any{"score": 99}}}, 400},
		{"a player cannot submit as another player", req{method: "POST", path: submit, token: alice.token, body: map[string]any{"design": design(2), "player_id": bob.ID}}, 400},
		{"no token, no submission", req{method: "POST", path: submit, body: map[string]any{"design": design(2)}}, 401},
		{"a forged token is refused", req{method: "POST", path: submit, token: "bp_" + strings.Repeat("A", 43), body: map[string]any{"design": design(2)}}, 401},
		{"the admin token is not a prefix match", req{method: "GET", path: "/v1/players/me", token: s.adminToken[:len(s.adminToken)-1]}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := s.do(t, tt.rq); r.status != tt.status {
				t.Errorf("status %d, want %d; body %.300s", r.status, tt.status, r.body)
			}
		})
	}

	t.Run("another player's profile has no token or private data", func(t *testing.T) {
		r := s.must(t, 200, req{method: "GET", path: "/v1/players/" + bob.ID, token: alice.token}, nil)
		var fields map[string]any
		r.decode(t, &fields)
		for k := range fields {
			// seasons and events: the public history of play (ranks and
			// scores on public boards); rating: the public duel rating;
			// stars: what their public bests earn on each level.
			if k != "id" && k != "name" && k != "role" && k != "created_at" && k != "seasons" && k != "events" && k != "rating" && k != "stars" {
				t.Errorf("public profile has field %q", k)
			}
		}
		if bytes.Contains(r.body, []byte(bob.token)) || bytes.Contains(r.body, []byte("token")) {
			t.Errorf("public profile leaks a token: %s", r.body)
		}
		var me player
		s.must(t, 200, req{method: "GET", path: "/v1/players/me", token: alice.token}, &me)
		if me.ID != alice.ID {
			t.Errorf("/players/me with alice's token is %s", me.ID)
		}
		sub := s.must(t, 200, req{method: "GET", path: "/v1/submissions/" + bobsFirst.Submission.ID, token: alice.token}, nil)
		if bytes.Contains(sub.body, []byte(bob.token)) {
			t.Error("a submission leaks its player's token")
		}
	})

	t.Run("a submission cannot overwrite another player's entry", func(t *testing.T) {
		before := s.wholeBoard(t, tutorial, 100)
		s.submit(t, alice, tutorial, design(3))
		after := s.wholeBoard(t, tutorial, 100)
		find := func(es []entry, id string) (entry, bool) {
			for _, e := range es {
				if e.PlayerID == id {
					return e, true
				}
			}
			return entry{}, false
		}
		b0, _ := find(before, bob.ID)
		b1, ok := find(after, bob.ID)
		if !ok || b1.Score != b0.Score || b1.SubmissionID != b0.SubmissionID || b1.AchievedAt != b0.AchievedAt {
			t.Errorf("bob's entry changed when alice submitted: %+v -> %+v", b0, b1)
		}
		if a, ok := find(after, alice.ID); !ok || a.SubmissionID == b0.SubmissionID {
			t.Errorf("alice's entry %+v", a)
		}
	})

	t.Run("tokens are stored hashed", func(t *testing.T) {
		db := s.db(t)
		for _, p := range []player{alice, bob} {
			var hash []byte
			if err := db.QueryRow(t.Context(), `SELECT token_hash FROM players WHERE id = $1`, p.ID).Scan(&hash); err != nil {
				t.Fatal(err)
			}
			want := sha256.Sum256([]byte(p.token))
			if !bytes.Equal(hash, want[:]) {
				t.Errorf("%s: token_hash is not SHA-256 of the token", p.Name)
			}
		}
		// The plaintext appears nowhere in the database.
		rows, err := db.Query(t.Context(), `
			SELECT row_to_json(x)::text FROM (
				SELECT * FROM players) x
			UNION ALL SELECT row_to_json(r)::text FROM submission_requests r
			UNION ALL SELECT design::text || coalesce(result::text, '') FROM submissions`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var text string
			if err := rows.Scan(&text); err != nil {
				t.Fatal(err)
			}
			for _, p := range []player{alice, bob} {
				if strings.Contains(text, p.token) || strings.Contains(text, strings.TrimPrefix(p.token, "bp_")) {
					t.Errorf("the plaintext token of %s is stored: %.200s", p.Name, text)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLevelOwnership: only a level's owner (or an admin) may change it, and
// a new slug is created once however many authors race for it.
func TestLevelOwnership(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	ann, ben := s.newAuthor(t, "ann"), s.newAuthor(t, "ben")
	doc := levelDoc(t, s, "anns-level")
	s.must(t, 201, req{method: "POST", path: "/v1/challenges", token: ann.token, body: doc}, nil)

	doc["title"] = "Taken over"
	if r := s.do(t, req{method: "PUT", path: "/v1/challenges/anns-level", token: ben.token, body: doc}); r.status != 403 {
		t.Errorf("another author's PUT: %d %s", r.status, r.body)
	}
	var c challenge
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/anns-level"}, &c)
	if c.Title != "Custom anns-level" {
		t.Errorf("title after a refused PUT: %q", c.Title)
	}
	doc["title"] = "Ann's own change"
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/anns-level", token: ann.token, body: doc}, nil)
	doc["title"] = "Admin's change"
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/anns-level", token: s.adminToken, body: doc}, nil)
	// An admin's change does not make the admin the owner.
	doc["title"] = "Ann again"
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/anns-level", token: ann.token, body: doc}, nil)
	var owner string
	if err := s.db(t).QueryRow(t.Context(), `SELECT owner_id::text FROM levels WHERE slug = 'anns-level' AND is_current`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != ann.ID {
		t.Errorf("owner_id = %s, want ann %s", owner, ann.ID)
	}

	// Concurrent creations of one slug, by POST and by PUT: one 201.
	for _, method := range []string{"POST", "PUT"} {
		slug := "race-" + strings.ToLower(method)
		var authors []player
		for i := range 6 {
			authors = append(authors, s.newAuthor(t, fmt.Sprintf("%s-author-%d", method, i)))
		}
		statuses := make([]int, len(authors))
		var wg sync.WaitGroup
		for i, a := range authors {
			d := levelDoc(t, s, slug)
			d["title"] = "by " + a.Name
			path := "/v1/challenges"
			if method == "PUT" {
				path += "/" + slug
			}
			wg.Go(func() {
				statuses[i] = s.send(t, req{method: method, path: path, token: a.token, body: d}).status
			})
		}
		wg.Wait()
		created := 0
		for _, st := range statuses {
			switch {
			case st == 201:
				created++
			case st == 409, method == "PUT" && st == 403: // lost the race / someone else's now
			default:
				t.Errorf("%s race: status %d", method, st)
			}
		}
		if created != 1 {
			t.Errorf("%s race: %d creations (%v), want 1", method, created, statuses)
		}
		var n int
		if err := s.db(t).QueryRow(t.Context(), `SELECT count(*) FROM levels WHERE slug = $1`, slug).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s race: %d versions stored, %v", method, n, err)
		}
	}
}

// TestRetryDoesNotSimulate: a retry with the same Idempotency-Key is
// answered from the store; the engine does not run again.
func TestRetryDoesNotSimulate(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "retrier")
	post := func() *response {
		return s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: p.token,
			header: map[string]string{"Idempotency-Key": "once"}, body: map[string]any{"design": design(2)}})
	}
	if r := post(); r.status != 201 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	runs := s.submissionRuns(t)
	for range 3 {
		r := post()
		if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: %d %v", r.status, r.header)
		}
	}
	if got := s.submissionRuns(t); got != runs {
		t.Errorf("submission simulations: %v before retries, %v after; want no new runs", runs, got)
	}
}

// submissionRuns reads how many submission simulations the server ran.
func (s *testServer) submissionRuns(t *testing.T) string {
	t.Helper()
	r := s.send(t, req{method: "GET", path: "/metrics"})
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	total := ""
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "backpressure_simulations_total{") && strings.Contains(line, `kind="submission"`) {
			total += line + ";"
		}
	}
	if total == "" {
		t.Fatalf("no submission simulations in /metrics:\n%s", r.body)
	}
	return total
}
