package game_test

import (
	"strings"
	"testing"

	"backpressure/internal/game"
)

// Two names are one name when either of their keys is the same: names that
// look alike, or read alike without their case, are one name; names a reader
// tells apart are two.
func TestNameKeys(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"eve", "\u0435ve", true},     // Cyrillic е
		{"eve", "ｅｖｅ", true},          // fullwidth
		{"paypal", "𝔭𝒶𝕪𝕡𝕒ℓ", true},    // mathematical letters
		{"José", "Jose\u0301", true},  // decomposed accent
		{"ada", "ADA", true},          // case
		{"ada", "Ada", true},          // case
		{"admin", "\u0430dmin", true}, // Cyrillic а
		{"bob", "\u13cfob", true},     // Cherokee letter looking like b
		{"l33t", "I33t", true},        // capital I drawn as l
		{"lambda", "Iambda", true},    // capital I drawn as l
		{"ΣΟΦΟΣ", "ΣOΦOΣ", true},      // Latin O among Greek capitals
		{"x y", "x\u00a0y", true},     // no-break space
		{"admin", "adm\u0131n", true}, // dotless ı
		{"Admin", "adm\u0131n", true}, // dotless ı and case
		{"ADMIN", "admin", true},      // capital I read as i without case
		{"ADMIN", "Admin", true},
		{"ADMIN", "adm\u0131n", true}, // dotless ı, capital I
		{"ADMIN", "\u0430dmin", true}, // Cyrillic а, capital I
		{"ADMIN", "ADMLN", true},      // capital I drawn as l
		{"İstanbul", "istanbul", true},
		{"ada", "adam", false},
		{"eve", "eva", false},
		{"ｘ", "y", false},
		{"admin", "admln", false}, // i and l, told apart in lower case
		{"admin", "ADMLN", false},
		{"ADMIN", "admln", false},
		{"Iambda", "iambada", false},
	}
	for _, tt := range tests {
		a, fa := game.CanonicalName("name", tt.a)
		b, fb := game.CanonicalName("name", tt.b)
		if fa != nil || fb != nil {
			t.Errorf("%q / %q: %v %v", tt.a, tt.b, fa, fb)
			continue
		}
		seen := game.NameKey(a) == game.NameKey(b)
		lower := game.NameLowerKey(a) == game.NameLowerKey(b)
		if got := seen || lower; got != tt.same {
			t.Errorf("%q and %q: one name = %v (NameKey %q, %q; NameLowerKey %q, %q), want %v", a, b, got,
				game.NameKey(a), game.NameKey(b), game.NameLowerKey(a), game.NameLowerKey(b), tt.same)
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
