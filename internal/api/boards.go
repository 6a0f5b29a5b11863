package api

import (
	"net/http"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// handleLevelBoard is a level version's leaderboard (?version=, default
// current).
func (s *server) handleLevelBoard(w http.ResponseWriter, r *http.Request) {
	slug, err := pathSlug(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.board(w, r, slug)
}

// handleGlobalBoard is the board over all levels: per player, the sum of
// their best scores on the current version of every level.
func (s *server) handleGlobalBoard(w http.ResponseWriter, r *http.Request) {
	s.board(w, r, "")
}

// board serves one page of a board. Ranks come from the store in one
// snapshot, so every replica gives the same page.
func (s *server) board(w http.ResponseWriter, r *http.Request, slug string) {
	q, err := s.boardQuery(r, slug)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.store.Board(r.Context(), q)
	if err != nil {
		if q.AroundPlayer != nil && game.ErrorCode(err) == game.ENOTFOUND && slug != "" {
			// Distinguish "no such level" from "you are not on it".
			if _, lerr := s.store.Level(r.Context(), slug, q.Version); lerr == nil {
				err = errorf(game.ENOTFOUND, "you are not on this board yet: submit a passing design first")
			}
		}
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, page)
}

// boardQuery reads limit, cursor, version and around from the query string.
// Malformed parameters are 400s naming the parameter.
func (s *server) boardQuery(r *http.Request, slug string) (game.BoardQuery, error) {
	var fields []game.FieldError
	q := game.BoardQuery{Slug: slug, Cursor: r.URL.Query().Get("cursor")}
	var err error
	if q.Limit, err = queryInt(r, "limit", 0, 1, game.MaxBoardLimit); err != nil {
		fields = append(fields, game.ErrorFields(err)...)
	}
	if slug != "" {
		if q.Version, err = queryInt(r, "version", 0, 0, maxVersion); err != nil {
			fields = append(fields, game.ErrorFields(err)...)
		}
	} else if r.URL.Query().Has("version") {
		fields = append(fields, game.FieldError{Field: "version", Reason: "the global board has no versions"})
	}
	around, aroundFields, err := aroundMe(r, q.Cursor, "on any board")
	if err != nil {
		return q, err
	}
	q.AroundPlayer = around
	fields = append(fields, aroundFields...)
	if fe := checkCursor(q.Cursor); fe != nil {
		fields = append(fields, *fe)
	}
	if len(fields) > 0 {
		return q, badRequest("a query parameter is malformed", fields...)
	}
	if _, _, err := q.Normalize(); err != nil {
		return q, badRequest("a query parameter is malformed", game.ErrorFields(err)...)
	}
	return q, nil
}

// aroundMe reads ?around=, which may only be "me" (the signed-in player) and
// does not combine with a cursor; where says what the admin is not in.
func aroundMe(r *http.Request, cursor, where string) (*uuid.UUID, []game.FieldError, error) {
	switch r.URL.Query().Get("around") {
	case "":
		return nil, nil, nil
	case "me":
		p, ok := playerFrom(r.Context())
		if !ok {
			return nil, nil, errorf(game.EUNAUTHORIZED, "around=me needs a player token")
		}
		if p.ID == uuid.Nil {
			return nil, nil, errorf(game.ENOTFOUND, "the configured admin is not %s", where)
		}
		if cursor != "" {
			return &p.ID, []game.FieldError{{Field: "around", Reason: "cannot be combined with cursor"}}, nil
		}
		return &p.ID, nil, nil
	default:
		return nil, []game.FieldError{{Field: "around", Reason: `must be "me"`}}, nil
	}
}
