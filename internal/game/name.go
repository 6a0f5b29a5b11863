package game

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"go.mau.fi/util/confusable"
	"golang.org/x/text/secure/precis"
)

// Player names. A name is shown to other players beside scores, so two
// names must never look alike and a name must never be invisible:
//
//   - a name is a PRECIS nickname (RFC 8266, the Nickname profile of RFC
//     8264's FreeformClass): Unicode letters, digits, symbols, punctuation
//     and spaces; no control, format, unassigned or default-ignorable
//     characters. It is stored in the profile's enforced form: NFKC (so a
//     fullwidth "ｅｖｅ" is "eve" and a decomposed "é" is composed), other
//     spaces mapped to U+0020, runs of spaces collapsed, none at either end;
//   - it has at least one visible character (no name of Hangul fillers, the
//     Braille blank or combining marks alone);
//   - it is unique under two keys, both TR39 confusable skeletons case
//     folded after the skeleton is taken: the skeleton of the name as typed
//     (NameKey), and the skeleton of the name in lower case (NameLowerKey).
//     A name is refused when either key is taken. The first key compares
//     what a reader sees: "eve" written with a Cyrillic "е", "admin" with a
//     dotless "ı", "paypal" in mathematical letters and "lambda" with a
//     capital I for its l are each one name with the plain spelling. The
//     second compares the name read without its case: "ADMIN" and "admin"
//     are one name, though the first key reads the capital I as an l.
//     Neither key alone does both, and one key cannot: a capital I looks
//     like an l and means an i, so "ADMIN" is one name with "admin" (by
//     the second key) and with "ADMLN" (by the first), while "admin" and
//     "admln", told apart in lower case, stay two names.

// nameKeyPrefix marks keys computed by this rule (rather than by an older
// one), so that a store can find and recompute older keys. Both keys carry
// it.
const nameKeyPrefix = "s3:"

// CanonicalName returns name in the form it is stored and shown in, or every
// problem with it. field is the JSON path to report.
func CanonicalName(field, name string) (string, []FieldError) {
	if !utf8.ValidString(name) {
		return "", []FieldError{{Field: field, Reason: "must be valid UTF-8"}}
	}
	if utf8.RuneCountInString(name) > 4*MaxNameLen {
		return "", []FieldError{{Field: field, Reason: "must be 1 to 32 characters"}}
	}
	enforced, err := precis.Nickname.String(name)
	switch {
	case err != nil && !strings.Contains(err.Error(), "empty string"):
		// precis reports disallowed runes and contextual-rule failures
		// (a joiner out of place) with unexported errors.
		return "", []FieldError{{Field: field, Reason: "must contain only letters, digits, symbols, punctuation and spaces (no control, format or invisible characters)"}}
	case err != nil:
		return "", []FieldError{{Field: field, Reason: "must have at least one visible character"}}
	}
	if n := utf8.RuneCountInString(enforced); n < MinNameLen || n > MaxNameLen {
		return "", []FieldError{{Field: field, Reason: "must be 1 to 32 characters"}}
	}
	if !hasVisible(enforced) {
		return "", []FieldError{{Field: field, Reason: "must have at least one visible character (Hangul fillers, the Braille blank, spaces and marks alone are invisible)"}}
	}
	return enforced, nil
}

// hasVisible reports whether s has a character that draws something.
func hasVisible(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc) || blank(r) {
			continue
		}
		if unicode.IsGraphic(r) {
			return true
		}
	}
	return false
}

// blank reports the characters that are letters or symbols to Unicode but
// draw nothing (Default_Ignorable fillers that NFKC can produce, and the
// Braille pattern with no dots).
func blank(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, // Hangul fillers
		0x2800,         // Braille pattern blank
		0x180E, 0x200B, // Mongolian vowel separator, zero width space
		0x2060, 0xFEFF, 0x034F, 0x17B4, 0x17B5:
		return true
	}
	return false
}

// NameKey returns the key of name as typed (see the rule above); it
// expects a canonical name. Stores compute it in Go rather than in SQL so
// that uniqueness does not depend on the database's locale.
func NameKey(name string) string {
	return nameKeyPrefix + foldCase(confusable.Skeleton(enforcedName(name)))
}

// NameLowerKey returns the key of name in lower case (see the rule above);
// it expects a canonical name.
func NameLowerKey(name string) string {
	return nameKeyPrefix + foldCase(confusable.Skeleton(strings.ToLower(enforcedName(name))))
}

// enforcedName is name in the Nickname profile's enforced form, or name
// itself if the profile refuses it (keys of stored names are computed
// whatever they hold).
func enforcedName(name string) string {
	enforced, err := precis.Nickname.String(name)
	if err != nil {
		return name
	}
	return enforced
}

// NameKeyPattern is a SQL LIKE pattern that matches the keys NameKey and
// NameLowerKey make.
const NameKeyPattern = nameKeyPrefix + "%"

// IsCurrentNameKey reports whether key was made by this rule's NameKey or
// NameLowerKey (a store recomputes the others).
func IsCurrentNameKey(key string) bool { return strings.HasPrefix(key, nameKeyPrefix) }

// foldCase maps every rune to the smallest rune of its simple case-folding
// orbit, so that keys agree whatever case a skeleton's prototypes are in.
func foldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		lo := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < lo {
				lo = f
			}
		}
		b.WriteRune(lo)
	}
	return b.String()
}
