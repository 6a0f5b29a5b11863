package game_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

func TestErrorCode(t *testing.T) {
	notFound := game.Errorf(game.ENOTFOUND, "player %s not found", "x")
	tests := []struct {
		name        string
		err         error
		code, msg   string
		fieldsCount int
	}{
		{"nil", nil, "", "", 0},
		{"game error", notFound, game.ENOTFOUND, "player x not found", 0},
		{"wrapped", fmt.Errorf("op: %w", notFound), game.ENOTFOUND, "player x not found", 0},
		{"other", errors.New("boom"), game.EINTERNAL, "internal error", 0},
		{"invalid", game.Invalid("bad", []game.FieldError{{Field: "components[2].params.replicas", Reason: "must be positive"}}), game.EINVALID, "bad", 1},
	}
	for _, tt := range tests {
		if got := game.ErrorCode(tt.err); got != tt.code {
			t.Errorf("%s: ErrorCode = %q, want %q", tt.name, got, tt.code)
		}
		if got := game.ErrorMessage(tt.err); got != tt.msg {
			t.Errorf("%s: ErrorMessage = %q, want %q", tt.name, got, tt.msg)
		}
		if got := len(game.ErrorFields(tt.err)); got != tt.fieldsCount {
			t.Errorf("%s: %d fields, want %d", tt.name, got, tt.fieldsCount)
		}
	}
	if game.Invalid("nothing wrong", nil) != nil {
		t.Error("Invalid with no fields is not nil")
	}
	if got := notFound.Error(); got != "not_found: player x not found" {
		t.Errorf("Error() = %q", got)
	}
}

func TestNameKey(t *testing.T) {
	tests := []struct{ a, b string }{
		{"Ada", "aDA"},
		{"Ärger", "äRGER"},
		{"straße", "STRAßE"},
		{"K", "\u212a"}, // Kelvin sign folds to k
	}
	for _, tt := range tests {
		if game.NameKey(tt.a) != game.NameKey(tt.b) {
			t.Errorf("NameKey(%q) != NameKey(%q)", tt.a, tt.b)
		}
		if !strings.EqualFold(tt.a, tt.b) {
			t.Errorf("test case %q/%q is not EqualFold", tt.a, tt.b)
		}
	}
	if game.NameKey("ada") == game.NameKey("adam") {
		t.Error("different names share a key")
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, strings.Repeat("é", 32): true, strings.Repeat("x", 33): false,
		"": false, " ada": false, "ada ": false, "a\x00b": false, "a\nb": false, "\xff": false,
	} {
		if got := len(game.ValidName("name", name)) == 0; got != ok {
			t.Errorf("ValidName(%q) ok = %v, want %v", name, got, ok)
		}
	}
}

func TestToken(t *testing.T) {
	plain, hash := game.NewToken()
	if !strings.HasPrefix(plain, "bp_") || len(plain) != 3+43 {
		t.Errorf("token %q: want bp_ and 43 base64url characters", plain)
	}
	if _, err := base64.RawURLEncoding.DecodeString(plain[3:]); err != nil {
		t.Errorf("token is not base64url: %v", err)
	}
	if !bytes.Equal(hash, game.HashToken(plain)) || len(hash) != game.TokenHashLen {
		t.Error("hash differs from HashToken(plaintext)")
	}
	other, _ := game.NewToken()
	if other == plain {
		t.Error("two tokens are equal")
	}
}

func TestBoardKeyCompare(t *testing.T) {
	t1 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("00000000-0000-0000-0000-000000000002")
	ordered := []game.BoardKey{
		{Score: 100, AchievedAt: t1, PlayerID: b},
		{Score: 50, AchievedAt: t1, PlayerID: a},
		{Score: 50, AchievedAt: t1, PlayerID: b},
		{Score: 50, AchievedAt: t1.Add(time.Microsecond), PlayerID: a},
		{Score: 0, AchievedAt: t1, PlayerID: a},
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := ordered[i].Compare(ordered[j]); got != want {
				t.Errorf("Compare(%d, %d) = %d, want %d", i, j, got, want)
			}
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []game.Cursor{
		{Key: game.BoardKey{Score: 123, AchievedAt: time.Date(2025, 3, 4, 5, 6, 7, 8000, time.UTC), PlayerID: uuid.New()}},
		{Key: game.BoardKey{Score: 0, AchievedAt: time.Unix(0, 0).UTC(), PlayerID: uuid.Nil}, Before: true},
	} {
		got, err := game.ParseCursor(c.String())
		if err != nil {
			t.Fatalf("ParseCursor: %v", err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	for _, bad := range []string{"", "x", "!!!!", base64.RawURLEncoding.EncodeToString(make([]byte, 34))} {
		if _, err := game.ParseCursor(bad); game.ErrorCode(err) != game.EINVALID {
			t.Errorf("ParseCursor(%q) = %v, want EINVALID", bad, err)
		}
	}
}

func FuzzParseCursor(f *testing.F) {
	f.Add(game.Cursor{Key: game.BoardKey{Score: 1, AchievedAt: time.Unix(1, 0), PlayerID: uuid.New()}}.String())
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := game.ParseCursor(s)
		if err != nil {
			return
		}
		again, err := game.ParseCursor(c.String())
		if err != nil || again != c {
			t.Errorf("re-encoding %q: %+v, %v; want %+v", s, again, err, c)
		}
	})
}

func TestBoardQueryNormalize(t *testing.T) {
	id := uuid.New()
	cur := game.Cursor{Key: game.BoardKey{Score: 1, AchievedAt: time.Unix(5, 0).UTC(), PlayerID: id}}
	tests := []struct {
		name   string
		q      game.BoardQuery
		want   game.BoardQuery
		cursor *game.Cursor
		fields []string
	}{
		{"defaults", game.BoardQuery{Slug: "a"}, game.BoardQuery{Slug: "a", Limit: game.DefaultBoardLimit}, nil, nil},
		{"global drops version", game.BoardQuery{Version: 3, Limit: 7}, game.BoardQuery{Limit: 7}, nil, nil},
		{"cursor", game.BoardQuery{Slug: "a", Limit: 1, Cursor: cur.String()}, game.BoardQuery{Slug: "a", Limit: 1, Cursor: cur.String()}, &cur, nil},
		{"all wrong", game.BoardQuery{Slug: "a", Limit: 101, Version: -1, Cursor: "zz", AroundPlayer: &id}, game.BoardQuery{}, nil,
			[]string{"limit", "version", "cursor", "cursor"}},
	}
	for _, tt := range tests {
		got, c, err := tt.q.Normalize()
		var fields []string
		for _, fe := range game.ErrorFields(err) {
			fields = append(fields, fe.Field)
		}
		if diff := cmp.Diff(tt.fields, fields); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", tt.name, diff)
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: query (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.cursor, c); diff != "" {
			t.Errorf("%s: cursor (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestTimestamp(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	in := time.Date(2025, 1, 1, 1, 0, 0, 1_234_567, loc)
	want := time.Date(2025, 1, 1, 0, 0, 0, 1_234_000, time.UTC)
	if got := game.Timestamp(in); !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond() != 1_234_000 {
		t.Errorf("Timestamp = %v, want %v", got, want)
	}
}

// Issue 25: an event's creator and every admin could read its hidden chaos from
// the start and still enter it.
func TestEventCheckEntrant(t *testing.T) {
	creator := game.Player{ID: uuid.New(), Role: game.RoleAuthor}
	e := game.Event{ID: uuid.New(), CreatedBy: creator.ID}
	for _, tt := range []struct {
		name string
		p    game.Player
		code string
	}{
		{"the creator", creator, game.EEVENTCONFLICT},
		{"an admin", game.Player{ID: uuid.New(), Role: game.RoleAdmin}, game.EEVENTCONFLICT},
		{"another author", game.Player{ID: uuid.New(), Role: game.RoleAuthor}, ""},
		{"a player", game.Player{ID: uuid.New(), Role: game.RolePlayer}, ""},
	} {
		if got := game.ErrorCode(e.CheckEntrant(tt.p)); got != tt.code {
			t.Errorf("%s: code %q, want %q", tt.name, got, tt.code)
		}
	}
}
