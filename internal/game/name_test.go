package game_test

import (
	"strings"
	"testing"

	"backpressure/internal/game"
)

// Names that look alike have one key; names that look different do not.
func TestNameKeyConfusables(t *testing.T) {
	same := []struct{ a, b string }{
		{"eve", "\u0435ve"},     // Cyrillic е
		{"eve", "ｅｖｅ"},          // fullwidth
		{"paypal", "𝔭𝒶𝕪𝕡𝕒ℓ"},    // mathematical letters
		{"José", "Jose\u0301"},  // decomposed accent
		{"ada", "ADA"},          // case
		{"admin", "\u0430dmin"}, // Cyrillic а
		{"bob", "\u13cfob"},     // Cherokee letter looking like b
		{"l33t", "I33t"},        // capital I drawn as l
		{"ΣΟΦΟΣ", "ΣOΦOΣ"},      // Latin O among Greek capitals
		{"x y", "x\u00a0y"},     // no-break space
		{"admin", "adm\u0131n"}, // dotless ı
		{"Admin", "adm\u0131n"}, // dotless ı and case
		{"ada", "Ada"},          // case
	}
	for _, tt := range same {
		a, fa := game.CanonicalName("name", tt.a)
		b, fb := game.CanonicalName("name", tt.b)
		if fa != nil || fb != nil {
			t.Errorf("%q / %q: %v %v", tt.a, tt.b, fa, fb)
			continue
		}
		if game.NameKey(a) != game.NameKey(b) {
			t.Errorf("NameKey(%q) = %q, NameKey(%q) = %q: want one key", a, game.NameKey(a), b, game.NameKey(b))
		}
	}
	for _, pair := range [][2]string{{"ada", "adam"}, {"eve", "eva"}, {"ｘ", "y"}, {"ADMIN", "admin"}} {
		if game.NameKey(pair[0]) == game.NameKey(pair[1]) {
			t.Errorf("%q and %q share a key", pair[0], pair[1])
		}
	}
}

func TestCanonicalName(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"ada", "ada", true},
		{"ｅｖｅ", "eve", true},
		{"Jose\u0301", "José", true},
		{"  ada  lovelace ", "ada lovelace", true},
		{strings.Repeat("é", 32), strings.Repeat("é", 32), true},
		{strings.Repeat("x", 33), "", false},
		{"", "", false},
		{"   ", "", false},
		{"\u3164", "", false},       // Hangul filler
		{"\u115f\u1160", "", false}, // Hangul choseong and jungseong fillers
		{"\uffa0", "", false},       // halfwidth Hangul filler
		{"\u2800\u2800", "", false}, // Braille blank
		{"\u0301\u0302", "", false}, // combining marks alone
		{"a\u200bb", "", false},     // zero width space
		{"abc\u202edcb", "", false}, // right-to-left override
		{"a\x00b", "", false},       // NUL
		{"\x1b[31mred", "", false},  // escape sequence
		{"\xff", "", false},         // invalid UTF-8
		{"Robert'); DROP TABLE x;--", "Robert'); DROP TABLE x;--", true},
	}
	for _, tt := range tests {
		got, fe := game.CanonicalName("name", tt.in)
		if (fe == nil) != tt.ok || got != tt.want {
			t.Errorf("CanonicalName(%q) = %q, %v; want %q, ok %v", tt.in, got, fe, tt.want, tt.ok)
		}
		if fe != nil && (len(fe) != 1 || fe[0].Field != "name" || fe[0].Reason == "") {
			t.Errorf("CanonicalName(%q): problems %+v", tt.in, fe)
		}
	}
}
