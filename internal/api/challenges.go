package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/sim"
	"backpressure/internal/strictjson"
)

type challengesResponse struct {
	Challenges []challengeListItem `json:"challenges"`
	// CampaignStars is the signed-in player's total over the built-in
	// campaign (absent for anonymous readers).
	CampaignStars *rules.StarTotal `json:"campaign_stars,omitempty"`
}

// challengeListItem is a level's current version in the list, with the
// signed-in player's stars on the level (absent for anonymous readers).
type challengeListItem struct {
	game.LevelSummary
	PlayerStars *rules.LevelStars `json:"player_stars,omitempty"`
}

// handleChallenges lists the current version of every level: the built-in
// campaign first, in campaign order, then the others by slug.
func (s *server) handleChallenges(w http.ResponseWriter, r *http.Request) {
	levels, err := s.store.Levels(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	slices.SortStableFunc(levels, func(a, b game.LevelSummary) int {
		ia, aIn := s.campaign[a.Slug]
		ib, bIn := s.campaign[b.Slug]
		switch {
		case aIn && bIn:
			return cmp.Compare(ia, ib)
		case aIn:
			return -1
		case bIn:
			return 1
		}
		return cmp.Compare(a.Slug, b.Slug)
	})
	stars, signedIn, err := s.signedInStars(r, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := challengesResponse{Challenges: make([]challengeListItem, len(levels))}
	for i, l := range levels {
		out.Challenges[i].LevelSummary = l
		if signedIn {
			ls := stars.Of(l.Slug)
			out.Challenges[i].PlayerStars = &ls
		}
	}
	if signedIn {
		out.CampaignStars = &stars.Campaign
	}
	writeJSON(w, r, http.StatusOK, out)
}

// challengeResponse is a level version as players see it: the stored
// summary, the level document (briefing, SLA targets, budget, catalog,
// traffic, chaos schedule, starting design) and what the catalog offers.
type challengeResponse struct {
	game.LevelSummary
	Definition json.RawMessage `json:"definition"`
	// PriceList is every instance type a design may name on this level.
	PriceList sim.Catalog `json:"price_list"`
	// Params documents, per offered component type, every parameter
	// (type, range, default); Knobs lists those a design may set.
	Params map[sim.Kind][]sim.ParamSpec `json:"params"`
	Knobs  map[sim.Kind][]string        `json:"knobs"`
	// PlayerStars are the signed-in player's stars on the level, over all
	// its versions (absent for anonymous readers and on uploads).
	PlayerStars *rules.LevelStars `json:"player_stars,omitempty"`
}

func newChallengeResponse(stored game.Level, l *challenges.Level) challengeResponse {
	knobs := map[sim.Kind][]string{}
	params := map[sim.Kind][]sim.ParamSpec{}
	for kind := range l.Catalog.Components {
		knobs[kind] = challenges.Knobs(kind)
		params[kind] = sim.Params(kind)
	}
	return challengeResponse{
		LevelSummary: stored.Summary(),
		Definition:   stored.Definition,
		PriceList:    l.Config().Catalog,
		Params:       params,
		Knobs:        knobs,
	}
}

// handleChallenge returns one level version (?version=, default current).
func (s *server) handleChallenge(w http.ResponseWriter, r *http.Request) {
	version, err := queryInt(r, "version", 0, 0, maxVersion)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	slug, err := pathSlug(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stored, l, err := s.rules.Level(r.Context(), slug, version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stars, signedIn, err := s.signedInStars(r, stored.Slug)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := newChallengeResponse(stored, l)
	if signedIn {
		ls := stars.Of(stored.Slug)
		out.PlayerStars = &ls
	}
	writeJSON(w, r, http.StatusOK, out)
}

type uploadResponse struct {
	Outcome   string            `json:"outcome"`
	Challenge challengeResponse `json:"challenge"`
	// Warnings and Lesson are the upload's check's (rules.LevelCheck): a
	// lesson that can be skipped is published with a warning, not refused.
	Warnings []game.FieldError  `json:"warnings"`
	Lesson   *rules.LessonCheck `json:"lesson"`
}

// handleCreateChallenge publishes a new level (authors). The slug must be
// new: changing a level is PUT /v1/challenges/{slug}.
func (s *server) handleCreateChallenge(w http.ResponseWriter, r *http.Request) {
	s.upload(w, r, "")
}

// handlePutChallenge creates or changes the level at the path's slug
// (authors). Built-in levels change only with a server release.
func (s *server) handlePutChallenge(w http.ResponseWriter, r *http.Request) {
	s.upload(w, r, chi.URLParam(r, "slug"))
}

func (s *server) upload(w http.ResponseWriter, r *http.Request, pathSlug string) {
	ctx := r.Context()
	body, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Malformed JSON is a 400 like any other body; a well-formed level
	// with problems is a 422 listing them with their JSON paths, exactly
	// as `backpressure validate` does.
	var probe any
	if err := strictjson.Unmarshal(body, &probe); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Every check of the document first (no simulation), then its starting
	// design is run once, on the dry-run workers, paid from the author's
	// budget, within the simulation timeout and the request's lifetime: an
	// author who leaves stops the run. POST /v1/challenges/check runs the
	// same checks without storing.
	// The lesson search runs from the starting design (an upload carries no
	// reference design) and its findings come back as warnings.
	l, check, err := s.rules.CheckLevel(ctx, keyByPlayerOrAddress(r), rules.LevelDraft{Document: body})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if pathSlug != "" && l.Slug != pathSlug {
		s.writeError(w, r, game.Invalid("the level is invalid", []game.FieldError{
			{Field: "slug", Reason: "must be " + strconv.Quote(pathSlug) + ", the slug in the path"}}))
		return
	}
	author, _ := playerFrom(ctx)
	stored, outcome, err := s.rules.PublishLevel(ctx, author, l, pathSlug != "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if outcome == rules.LevelCreated {
		status = http.StatusCreated
	}
	if outcome != rules.LevelUnchanged {
		s.logger(ctx).InfoContext(ctx, "level stored", "slug", stored.Slug, "version", stored.Version,
			"outcome", outcome, "author_id", author.ID.String())
	}
	w.Header().Set("Location", "/v1/challenges/"+stored.Slug)
	writeJSON(w, r, status, uploadResponse{Outcome: outcome, Challenge: newChallengeResponse(stored, l),
		Warnings: check.Warnings, Lesson: check.Lesson})
}
