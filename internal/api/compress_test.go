package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestCompressLarge(t *testing.T) {
	small := `{"ok":true}` + "\n"
	large := `{"entries":"` + strings.Repeat("x", 3*minCompressBytes) + `"}` + "\n"
	handler := func(body, contentType string, length bool) http.Handler {
		return compressLarge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			if length {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			}
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, body)
		}))
	}
	tests := []struct {
		name, body, contentType, accept string
		length, wantGzip                bool
	}{
		{"small JSON stays plain", small, "application/json", "gzip", true, false},
		{"large JSON is gzipped", large, "application/json", "gzip, deflate", true, true},
		{"large problem is gzipped", large, "application/problem+json", "gzip", true, true},
		{"unknown length is gzipped", large, "application/json", "gzip", false, true},
		{"no Accept-Encoding", large, "application/json", "", true, false},
		{"gzip refused with q=0", large, "application/json", "gzip;q=0, br", true, false},
		{"not JSON", large, "text/html", "gzip", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.accept != "" {
				req.Header.Set("Accept-Encoding", tt.accept)
			}
			rec := httptest.NewRecorder()
			handler(tt.body, tt.contentType, tt.length).ServeHTTP(rec, req)
			gotGzip := rec.Header().Get("Content-Encoding") == "gzip"
			if gotGzip != tt.wantGzip {
				t.Fatalf("Content-Encoding %q, want gzip %v", rec.Header().Get("Content-Encoding"), tt.wantGzip)
			}
			if rec.Header().Get("Vary") != "Accept-Encoding" {
				t.Errorf("Vary = %q", rec.Header().Get("Vary"))
			}
			body := rec.Body.Bytes()
			if gotGzip {
				if rec.Header().Get("Content-Length") != "" {
					t.Errorf("gzipped response keeps Content-Length %s", rec.Header().Get("Content-Length"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if string(body) != tt.body {
				t.Errorf("body differs: %d bytes, want %d", len(body), len(tt.body))
			}
		})
	}
}
