package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// Every number and name from outside is checked here, at the edge, against
// the range the store can hold and the OpenAPI document declares, so that no
// input reaches a driver that would refuse it with an error the client
// cannot read (a 500).

// maxVersion is the largest level version: versions are stored as 32-bit
// integers, so 2^31 and beyond name no version and are refused, not looked up.
const maxVersion = 1<<31 - 1

// queryInt reads an optional integer query parameter: def when absent, otherwise an
// integer in [least, most].
func queryInt(r *http.Request, name string, def, least, most int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	below := "must not be negative"
	if least > 0 {
		below = "must be at least " + strconv.Itoa(least)
	}
	reason := ""
	n, err := strconv.Atoi(v)
	switch {
	case errors.Is(err, strconv.ErrRange) && v[0] == '-':
		reason = below
	case errors.Is(err, strconv.ErrRange):
		reason = "must be at most " + strconv.Itoa(most)
	case err != nil:
		reason = "must be an integer"
	case n < least:
		reason = below
	case n > most:
		reason = "must be at most " + strconv.Itoa(most)
	default:
		return n, nil
	}
	return 0, badRequest("a query parameter is malformed", game.FieldError{Field: name, Reason: reason})
}

// pathSlug is the {slug} path parameter. A slug no level can have is a 404
// without a lookup.
func pathSlug(r *http.Request) (string, error) {
	slug := chi.URLParam(r, "slug")
	if !challenges.ValidSlug(slug) {
		return "", errorf(game.ENOTFOUND, "level not found")
	}
	return slug, nil
}

// Cursor times outside these years cannot be stored as a PostgreSQL
// timestamp (nor produced by any board), so such a cursor is malformed.
var (
	minCursorTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxCursorTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// checkCursor refuses a well-formed cursor whose position no board holds.
func checkCursor(raw string) *game.FieldError {
	if raw == "" {
		return nil
	}
	c, err := game.ParseCursor(raw)
	if err != nil {
		return nil // malformed: Normalize says so
	}
	if at := c.Key.AchievedAt; at.Before(minCursorTime) || at.After(maxCursorTime) {
		return &game.FieldError{Field: "cursor", Reason: "is not a valid cursor"}
	}
	return nil
}
