package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// fakeEventList serves GET /v1/events: pages events of padding bytes each,
// by a numeric cursor, with status on every page after the first.
func fakeEventList(t *testing.T, events, padding, status int) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/events" {
			http.NotFound(w, r)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit == 0 {
			limit = 20
		}
		from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		if from > 0 && status != http.StatusOK {
			w.WriteHeader(status)
			return
		}
		page := struct {
			Events []map[string]string `json:"events"`
			Next   string              `json:"next"`
		}{Events: []map[string]string{}}
		for i := from; i < min(from+limit, events); i++ {
			page.Events = append(page.Events, map[string]string{"title": strings.Repeat("x", padding)})
		}
		if from+limit < events {
			page.Next = strconv.Itoa(from + limit)
		}
		_ = json.NewEncoder(w).Encode(page)
	}))
}

func TestEventListRun(t *testing.T) {
	tests := []struct {
		name    string
		padding int
		status  int
		wantErr string
	}{
		{name: "pages under the bound", padding: 100, status: http.StatusOK},
		{name: "a page over the bound", padding: 2_000, status: http.StatusOK, wantErr: "more than 100000"},
		{name: "a page answered 500", padding: 100, status: http.StatusInternalServerError, wantErr: "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeEventList(t, 450, tt.padding, tt.status)
			defer srv.Close()
			err := cmdEventList(t.Context(), []string{"-url", srv.URL, "-readers", "2", "-duration", "200ms"})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}
}
