package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// writeJSON writes v as the JSON response with the given status.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	writeBody(w, r, status, v)
}

// writeBody encodes v before writing anything, so that an encoding failure
// (a bug: NaN in a result) is a clean 500 rather than half a document.
func writeBody(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeEncodeFailure(w, r, err)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeEncodeFailure answers a response that could not be encoded (a bug)
// with a fixed 500 problem.
func writeEncodeFailure(w http.ResponseWriter, r *http.Request, err error) {
	loggerFrom(r.Context()).ErrorContext(r.Context(), "encode response", "err", err)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(`{"type":"` + problemTypePrefix + `internal","title":"Internal error","status":500,"detail":"internal error","code":"internal"}` + "\n"))
}
