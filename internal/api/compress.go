package api

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// minCompressBytes is the smallest JSON body worth gzipping. A response
// smaller than TCP's initial congestion window (10 segments, about 14 KB)
// reaches the client in the same round trip compressed or not, so below a
// few KB (a submission receipt, an error, a 20-entry page) gzip buys a few
// hundred bytes for CPU on every request; a 100-entry page is compressed.
const minCompressBytes = 4096

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// compressLarge gzips JSON responses of at least minCompressBytes (or of
// unknown length) for clients that accept gzip; everything else is passed
// through untouched. BestSpeed: on JSON it keeps most of the size saving
// of higher levels at a fraction of their CPU.
func compressLarge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

type compressWriter struct {
	http.ResponseWriter
	gz          *gzip.Writer
	wroteHeader bool
}

func (cw *compressWriter) WriteHeader(status int) {
	if cw.wroteHeader {
		return
	}
	cw.wroteHeader = true
	h := cw.Header()
	if worthCompressing(h, status) {
		cw.gz = gzipWriters.Get().(*gzip.Writer)
		cw.gz.Reset(cw.ResponseWriter)
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
	}
	cw.ResponseWriter.WriteHeader(status)
}

func worthCompressing(h http.Header, status int) bool {
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified || h.Get("Content-Encoding") != "" {
		return false
	}
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	if ct != "application/json" && ct != "application/problem+json" {
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" {
		n, err := strconv.Atoi(cl)
		return err == nil && n >= minCompressBytes
	}
	return true
}

func (cw *compressWriter) Write(b []byte) (int, error) {
	if !cw.wroteHeader {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.gz != nil {
		return cw.gz.Write(b)
	}
	return cw.ResponseWriter.Write(b)
}

// Flush sends what is buffered, compressed or not, for streamed responses.
func (cw *compressWriter) Flush() {
	if cw.gz != nil {
		_ = cw.gz.Flush()
	}
	if f, ok := cw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (cw *compressWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

func (cw *compressWriter) close() {
	if cw.gz == nil {
		return
	}
	_ = cw.gz.Close()
	cw.gz.Reset(nil)
	gzipWriters.Put(cw.gz)
	cw.gz = nil
}
