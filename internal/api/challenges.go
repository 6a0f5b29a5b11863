package api

import (
	"context"
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
	// campaign, on every page (absent for anonymous readers).
	CampaignStars *rules.StarTotal `json:"campaign_stars,omitempty"`
	Next          string           `json:"next"` // "" on the last page
}

// challengeListItem is a level's current version in the list, with the
// signed-in player's stars on the level (absent for anonymous readers).
type challengeListItem struct {
	game.LevelSummary
	PlayerStars *rules.LevelStars `json:"player_stars,omitempty"`
}

// handleChallenges lists the current version of every level by pages: the
// built-in campaign first, in campaign order, then the others by slug
// (bytewise); ?limit= 1..100 (20); ?cursor= a page's next.
func (s *server) handleChallenges(w http.ResponseWriter, r *http.Request) {
	q := game.ListQuery{Cursor: r.URL.Query().Get("cursor")}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultListLimit, game.MaxListLimit); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, cur, err := game.ParseLevelListQuery(q, len(s.campaign))
	if err != nil {
		s.writeError(w, r, badRequest("a query parameter is malformed", game.ErrorFields(err)...))
		return
	}
	levels, next, err := s.levelPage(r.Context(), q.Limit, cur)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The stars of the page's levels and of the campaign: what the page
	// shows, whatever else the player passed.
	only := slices.Clone(s.campaign)
	for _, l := range levels {
		only = append(only, l.Slug)
	}
	stars, signedIn, err := s.signedInStars(r, only)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := challengesResponse{Challenges: make([]challengeListItem, len(levels)), Next: next}
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

// levelPage reads one page of the level list from cur (nil: the first):
// the campaign's levels by their slugs, then, once the campaign is done,
// the others by a range of slugs, so a page costs O(limit + campaign)
// whatever was uploaded. A campaign level missing from the store is left
// out.
func (s *server) levelPage(ctx context.Context, limit int, cur *game.LevelListCursor) ([]game.LevelSummary, string, error) {
	from := game.LevelListCursor{Campaign: true}
	if cur != nil {
		from = *cur
	}
	page := []game.LevelSummary{}
	if from.Campaign {
		slugs := s.campaign[from.Position:min(from.Position+limit, len(s.campaign))]
		found, err := s.store.CurrentLevels(ctx, slugs)
		if err != nil {
			return nil, "", err
		}
		for _, slug := range slugs {
			if i := slices.IndexFunc(found, func(l game.LevelSummary) bool { return l.Slug == slug }); i >= 0 {
				page = append(page, found[i])
			}
		}
		if end := from.Position + len(slugs); end < len(s.campaign) {
			return page, game.LevelListCursor{Campaign: true, Position: end}.String(), nil
		}
		from = game.LevelListCursor{}
	}
	// One more than there is room for tells whether a next page exists.
	room := limit - len(page)
	others, err := s.store.LevelsAfter(ctx, from.After, s.campaign, room+1)
	if err != nil {
		return nil, "", err
	}
	if len(others) <= room {
		return append(page, others...), "", nil
	}
	after := from.After
	if room > 0 {
		after = others[room-1].Slug
	}
	return append(page, others[:room]...), game.LevelListCursor{After: after}.String(), nil
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
	stars, signedIn, err := s.signedInStars(r, []string{stored.Slug})
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
