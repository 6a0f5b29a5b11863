package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/strictjson"
)

// Error codes the transport adds to game's: they describe the request as
// HTTP received it rather than anything in the domain.
const (
	// eBadRequest: the body is not the JSON this route takes (syntax, an
	// unknown field, a wrong type) or a query parameter is malformed.
	eBadRequest = strictjson.EMALFORMED
	// eTooLarge: the body is over the route's size limit.
	eTooLarge = "too_large"
	// eUnsupportedMedia: the body is not declared as JSON.
	eUnsupportedMedia = "unsupported_media_type"
	// eMethodNotAllowed: the path exists, the method does not.
	eMethodNotAllowed = "method_not_allowed"
	// eRequestTimeout: the body did not arrive within the body timeout.
	eRequestTimeout = "request_timeout"
	// eBusy: the simulation queue or the in-flight limit is full; retry later.
	eBusy = scheduler.EBUSY
)

// statusOf is the one table from error codes to HTTP statuses.
var statusOf = map[string]int{
	eBadRequest:        http.StatusBadRequest,
	game.EINVALID:      http.StatusUnprocessableEntity,
	game.EUNAUTHORIZED: http.StatusUnauthorized,
	game.EFORBIDDEN:    http.StatusForbidden,
	game.ENOTFOUND:     http.StatusNotFound,
	eMethodNotAllowed:  http.StatusMethodNotAllowed,
	game.ECONFLICT:     http.StatusConflict,
	eTooLarge:          http.StatusRequestEntityTooLarge,
	eRequestTimeout:    http.StatusRequestTimeout,
	eUnsupportedMedia:  http.StatusUnsupportedMediaType,
	game.ERATELIMIT:    http.StatusTooManyRequests,
	game.EINTERNAL:     http.StatusInternalServerError,
	game.EUNAVAILABLE:  http.StatusServiceUnavailable,
	eBusy:              http.StatusServiceUnavailable,
	// Event rules.
	game.EEVENTNOTSTARTED: http.StatusConflict,
	game.EEVENTENDED:      http.StatusConflict,
	game.EATTEMPTLIMIT:    http.StatusConflict,
	game.EEVENTFULL:       http.StatusConflict,
	game.EEVENTCONFLICT:   http.StatusForbidden,
	game.ENOTJOINED:       http.StatusForbidden,
	// Duel rules.
	game.EDUELSELF:       http.StatusUnprocessableEntity,
	game.EDUELPAIRACTIVE: http.StatusConflict,
	game.EDUELDAILYLIMIT: http.StatusTooManyRequests,
	game.EDUELNOTPLAYER:  http.StatusForbidden,
	game.EDUELSTATE:      http.StatusConflict,
	game.EDUELDEADLINE:   http.StatusConflict,
	game.EDUELSUBMITTED:  http.StatusConflict,
	game.EDUELPRIVATE:    http.StatusForbidden,
	game.EDUELMATCHING:   http.StatusConflict,
}

// titleOf is the short, fixed summary of each problem type (RFC 9457 title).
var titleOf = map[string]string{
	eBadRequest:        "Malformed request",
	game.EINVALID:      "Invalid input",
	game.EUNAUTHORIZED: "Authentication required",
	game.EFORBIDDEN:    "Forbidden",
	game.ENOTFOUND:     "Not found",
	eMethodNotAllowed:  "Method not allowed",
	game.ECONFLICT:     "Conflict",
	eTooLarge:          "Request body too large",
	eRequestTimeout:    "Request body too slow",
	eUnsupportedMedia:  "Unsupported media type",
	game.ERATELIMIT:    "Too many requests",
	game.EINTERNAL:     "Internal error",
	game.EUNAVAILABLE:  "Service unavailable",
	eBusy:              "Server busy",
	// Event rules.
	game.EEVENTNOTSTARTED: "Event not started",
	game.EEVENTENDED:      "Event ended",
	game.EATTEMPTLIMIT:    "Attempt limit reached",
	game.EEVENTFULL:       "Event full",
	game.EEVENTCONFLICT:   "Conflict of interest",
	game.ENOTJOINED:       "Not joined",
	// Duel rules.
	game.EDUELSELF:       "Cannot duel yourself",
	game.EDUELPAIRACTIVE: "Duel already open",
	game.EDUELDAILYLIMIT: "Daily duel limit reached",
	game.EDUELNOTPLAYER:  "Not a player of this duel",
	game.EDUELSTATE:      "Duel not in that state",
	game.EDUELDEADLINE:   "Duel deadline passed",
	game.EDUELSUBMITTED:  "Design already submitted",
	game.EDUELPRIVATE:    "Duel is private until it ends",
	game.EDUELMATCHING:   "Already waiting for a match",
}

// problemTypePrefix makes each code an absolute problem type URI.
const problemTypePrefix = "urn:backpressure:problem:"

// problem is an RFC 9457 problem details document with two extensions:
// code (the error code, for programs) and errors (every invalid field).
type problem struct {
	Type      string            `json:"type"`
	Title     string            `json:"title"`
	Status    int               `json:"status"`
	Detail    string            `json:"detail"`
	Instance  string            `json:"instance,omitempty"`
	Code      string            `json:"code"`
	RequestID string            `json:"request_id,omitempty"`
	Errors    []game.FieldError `json:"errors,omitempty"`
}

// errorf is game.Errorf for the transport's own codes.
func errorf(code, format string, args ...any) error { return game.Errorf(code, format, args...) }

// badRequest reports malformed input with the fields concerned.
func badRequest(message string, fields ...game.FieldError) error {
	return &game.Error{Code: eBadRequest, Message: message, Fields: fields}
}

// retryAfter is what a 503 or 429 asks clients to wait, in seconds, unless
// the error says otherwise.
const retryAfter = 1

// writeError is the single exit for errors. A *game.Error is shown with its
// code, safe message and fields; anything else is logged whole and shown as
// "internal". A request whose client has gone away is logged at debug level
// and answered with nothing useful, since nobody reads it.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if retry := (*scheduler.RetryError)(nil); errors.As(err, &retry) {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.After/time.Second))))
	}
	code := game.ErrorCode(err)
	s.spreadRetryAfter(w, r, statusOf[code])
	if deferRefusal(r, code, err) {
		return // written by holdRefusals, after its hold
	}
	msg := game.ErrorMessage(err)
	ctx := r.Context()
	switch {
	case code == game.EINTERNAL && (errors.Is(err, context.Canceled) || ctx.Err() != nil):
		// The client went away (or the run was abandoned with it): nothing
		// went wrong on our side.
		s.logger(ctx).DebugContext(ctx, "request abandoned", "err", err)
		code, msg = game.EUNAVAILABLE, "request cancelled"
	case code == game.EINTERNAL && errors.Is(err, context.DeadlineExceeded):
		s.logger(ctx).WarnContext(ctx, "deadline exceeded", "err", err)
		code, msg = game.EUNAVAILABLE, "the request took too long; try again later"
	case code == game.EINTERNAL:
		s.logger(ctx).ErrorContext(ctx, "internal error", "err", err)
	case code == game.EUNAVAILABLE:
		s.logger(ctx).WarnContext(ctx, "unavailable", "err", err)
	}
	status, ok := statusOf[code]
	if !ok {
		s.logger(ctx).ErrorContext(ctx, "unmapped error code", "code", code, "err", err)
		code, status, msg = game.EINTERNAL, http.StatusInternalServerError, "internal error"
	}
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		}
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="backpressure"`)
	}
	writeProblem(w, r, problem{
		Type:      problemTypePrefix + code,
		Title:     titleOf[code],
		Status:    status,
		Detail:    msg,
		Instance:  r.URL.Path,
		Code:      code,
		RequestID: requestID(ctx),
		Errors:    game.ErrorFields(err),
	})
}

func writeProblem(w http.ResponseWriter, r *http.Request, p problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	writeBody(w, r, p.Status, p)
}
