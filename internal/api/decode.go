package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"backpressure/internal/game"
	"backpressure/internal/strictjson"
)

// readBody is the one way a request body is read: it must be declared as
// JSON, fit in limit bytes and not be empty. Errors are *game.Error values
// (415, 413, 400).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, errorf(eUnsupportedMedia, "send the body as application/json")
		}
	} else {
		return nil, errorf(eUnsupportedMedia, "send the body as application/json (the Content-Type header is missing)")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errorf(eTooLarge, "the body is larger than %d bytes", tooLarge.Limit)
		}
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("the body is empty", game.FieldError{Field: "", Reason: "a JSON object is required"})
	}
	// encoding/json would silently turn invalid UTF-8 into U+FFFD, so a
	// name or a design would be stored as something the client never sent.
	if !utf8.Valid(body) {
		return nil, badRequest("the body must be UTF-8",
			game.FieldError{Field: "", Reason: fmt.Sprintf("invalid UTF-8 at byte %d", strictjson.InvalidUTF8At(body))})
	}
	return body, nil
}

// decode reads a JSON body into v (a pointer to a request struct): strictly
// (an unknown field, a wrong type, a second value or a syntax error is a 400
// naming the field), then checks it with the validator (a 422 listing every
// invalid field by its JSON name). Domain checks come after, in the handler.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return err
	}
	return strictjson.Validate(v)
}
