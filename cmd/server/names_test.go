package main

import (
	"strings"
	"testing"
)

// TestLookalikeAndInvisibleNames: a name that looks like a taken one is a
// 409; a name with nothing visible is a 422 that says so; names are stored
// in their canonical (NFKC) form.
func TestLookalikeAndInvisibleNames(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	for _, name := range []string{"eve", "José", "paypal", "admin"} {
		s.newPlayer(t, name)
	}
	for _, tt := range []struct {
		name, why string
		status    int
		reason    string
	}{
		{"\u0435ve", "Cyrillic е", 409, ""},
		{"ｅｖｅ", "fullwidth", 409, ""},
		{"EVE", "case", 409, ""},
		{"Jose\u0301", "decomposed accent", 409, ""},
		{"𝔭𝒶𝕪𝕡𝕒ℓ", "mathematical letters", 409, ""},
		{"p\u0430ypal", "Cyrillic а", 409, ""},
		{"adm\u0131n", "dotless ı", 409, ""},
		{"ADMIN", "capital I", 409, ""},
		{"\u3164", "Hangul filler", 422, "visible"},
		{"\u3164\u3164\u3164", "Hangul fillers", 422, "visible"},
		{"\uffa0", "halfwidth Hangul filler", 422, "visible"},
		{"\u2800", "Braille blank", 422, "visible"},
		{"\u0301", "a combining mark alone", 422, "visible"},
		{"a\u200bb", "zero width space", 422, "invisible"},
		{"   ", "spaces", 422, "visible"},
	} {
		t.Run(tt.why, func(t *testing.T) {
			r := s.do(t, req{method: "POST", path: "/v1/players", body: map[string]any{"name": tt.name}})
			if r.status != tt.status {
				t.Fatalf("name %q (%s): %d %s, want %d", tt.name, tt.why, r.status, r.body, tt.status)
			}
			p := r.problem(t)
			if tt.status == 422 && (len(p.Errors) != 1 || p.Errors[0].Field != "name" || !strings.Contains(p.Errors[0].Reason, tt.reason)) {
				t.Errorf("problem %+v, want the name's reason to mention %q", p, tt.reason)
			}
		})
	}
	var out struct {
		Player player `json:"player"`
	}
	s.must(t, 201, req{method: "POST", path: "/v1/players", body: map[string]any{"name": "ｚｏｅ  ａｎｎ"}}, &out)
	if out.Player.Name != "zoe ann" {
		t.Errorf("stored name %q, want the canonical %q", out.Player.Name, "zoe ann")
	}
}
