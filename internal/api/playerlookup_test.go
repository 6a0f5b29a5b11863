package api

import (
	"net/url"
	"testing"
)

// A player is found by name the way names are unique: case and look-alike
// letters do not matter; there is no listing, and an unknown name is a 404.
func TestPlayerByName(t *testing.T) {
	f := newEventFixture(t)
	id := f.player("Ärger")
	someone := f.player("someone")
	admin := f.player("admin")

	for _, tt := range []struct {
		name   string
		query  string
		status int
		want   string
	}{
		{"exact", "?name=" + url.QueryEscape("Ärger"), 200, id},
		{"other case", "?name=" + url.QueryEscape("äRGER"), 200, id},
		{"cyrillic look-alike", "?name=" + url.QueryEscape("sоmeone"), 200, someone},
		{"capital I", "?name=ADMIN", 200, admin},
		{"dotless i", "?name=" + url.QueryEscape("adm\u0131n"), 200, admin},
		{"l for i", "?name=admln", 404, ""},
		{"unknown", "?name=nobody", 404, ""},
		{"prefix is not a match", "?name=" + url.QueryEscape("Ärge"), 404, ""},
		{"no name: no listing", "", 422, ""},
		{"empty name", "?name=", 422, ""},
		{"too long", "?name=" + url.QueryEscape(string(make([]byte, 200))), 422, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, out := f.do("GET", "/v1/players"+tt.query, "", nil)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, out)
			}
			if status != 200 {
				return
			}
			if _, ok := out["rating"]; !ok || out["token"] != nil {
				t.Errorf("profile: %v", out)
			}
			if out["id"] != tt.want {
				t.Errorf("found %v, want %s", out["id"], tt.want)
			}
		})
	}
}
