package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
)

// A dry run's timeline can be tens of megabytes of JSON (every tick of a
// long level, with every component). It is written as it is encoded, one
// tick at a time through a small buffer, rather than built whole in memory
// and then held for a client that may never read it; the write deadline
// (WriteTimeout, from the first byte) closes the connection of a client that
// stops reading, which releases the result.

// DefaultMaxPoints is how many ticks a dry run returns when the request
// does not say (max_points); the engine's ticks are kept, one in every k.
const DefaultMaxPoints = 1000

// streamBufferBytes is what is encoded ahead of the client.
const streamBufferBytes = 32 << 10

// writeSimulation streams resp. An encoding failure after the first byte
// (NaN in a result: a bug) can no longer become a clean 500, so it aborts
// the response: the client sees a cut connection, never a truncated
// document taken for a whole one.
func (s *server) writeSimulation(w http.ResponseWriter, r *http.Request, resp simulationResponse) {
	head := resp
	head.Result = nil
	// Everything but the ticks is small: encode it first, so that a bug
	// there is still a clean 500.
	var pre bytes.Buffer
	enc := json.NewEncoder(&pre)
	enc.SetEscapeHTML(false)
	parts := []any{head.Slug, head.Version, head.Evaluation, head.Every, head.TotalTicks}
	encoded := make([][]byte, len(parts))
	for i, p := range parts {
		pre.Reset()
		if err := enc.Encode(p); err != nil {
			writeEncodeFailure(w, r, err)
			return
		}
		encoded[i] = bytes.TrimSuffix(bytes.Clone(pre.Bytes()), []byte("\n"))
	}
	var tickMs, components, summary []byte
	if res := resp.Result; res != nil {
		for _, f := range []struct {
			dst *[]byte
			v   any
		}{{&tickMs, res.TickMs}, {&components, res.Components}, {&summary, res.Summary}} {
			pre.Reset()
			if err := enc.Encode(f.v); err != nil {
				writeEncodeFailure(w, r, err)
				return
			}
			*f.dst = bytes.TrimSuffix(bytes.Clone(pre.Bytes()), []byte("\n"))
		}
	}

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	s.startWriting(w)
	bw := bufio.NewWriterSize(w, streamBufferBytes)
	out := json.NewEncoder(bw)
	out.SetEscapeHTML(false)
	write := func(parts ...[]byte) {
		for _, p := range parts {
			_, _ = bw.Write(p)
		}
	}
	write([]byte(`{"slug":`), encoded[0], []byte(`,"version":`), encoded[1], []byte(`,"evaluation":`), encoded[2], []byte(`,"result":`))
	if resp.Result == nil {
		write([]byte("null"))
	} else {
		write([]byte(`{"tick_ms":`), tickMs, []byte(`,"components":`), components, []byte(`,"ticks":[`))
		for i := range resp.Result.Ticks {
			if i > 0 {
				write([]byte(","))
			}
			// An error is a bug (NaN) or a client gone (a failed write,
			// which the buffer keeps returning): either way, stop.
			if err := out.Encode(&resp.Result.Ticks[i]); err != nil {
				loggerFrom(r.Context()).DebugContext(r.Context(), "response abandoned", "err", err)
				panic(http.ErrAbortHandler)
			}
		}
		write([]byte(`],"summary":`), summary, []byte("}"))
	}
	write([]byte(`,"every":`), encoded[3], []byte(`,"total_ticks":`), encoded[4], []byte("}\n"))
	_ = bw.Flush()
}
