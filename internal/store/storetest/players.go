package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

func testPlayers(t *testing.T, f *fixture) {
	before := time.Now().Add(-time.Second)
	plain, hash := game.NewToken()
	p, err := f.s.CreatePlayer(f.ctx, "Ärger", game.RolePlayer, hash)
	if err != nil {
		t.Fatalf("CreatePlayer: %v", err)
	}
	if p.ID == uuid.Nil || p.ID.Version() != 7 {
		t.Errorf("ID = %v, want a UUIDv7", p.ID)
	}
	if p.CreatedAt.Location() != time.UTC || p.CreatedAt.Before(before) || p.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("CreatedAt = %v, want about now, in UTC", p.CreatedAt)
	}
	want := game.Player{ID: p.ID, Name: "Ärger", Role: game.RolePlayer, CreatedAt: p.CreatedAt}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("CreatePlayer (-want +got):\n%s", diff)
	}

	got, err := f.s.PlayerByTokenHash(f.ctx, game.HashToken(plain))
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("PlayerByTokenHash = %+v, %v; want %+v", got, err, want)
	}
	got, err = f.s.PlayerByID(f.ctx, p.ID)
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("PlayerByID = %+v, %v; want %+v", got, err, want)
	}

	_, other := game.NewToken()
	errTests := []struct {
		name  string
		pname string
		role  game.Role
		hash  []byte
		code  string
	}{
		{"same name", "Ärger", game.RolePlayer, other, game.ECONFLICT},
		{"same name other case", "äRGER", game.RoleAdmin, other, game.ECONFLICT},
		{"same token", "someone else", game.RolePlayer, hash, game.ECONFLICT},
		{"empty name", "", game.RolePlayer, other, game.EINVALID},
		{"long name", "abcdefghijklmnopqrstuvwxyz0123456", game.RolePlayer, other, game.EINVALID},
		{"bad role", "bob", game.Role("root"), other, game.EINVALID},
		{"bad hash", "bob", game.RolePlayer, []byte("short"), game.EINVALID},
	}
	for _, tt := range errTests {
		_, err := f.s.CreatePlayer(f.ctx, tt.pname, tt.role, tt.hash)
		wantCode(t, "CreatePlayer "+tt.name, err, tt.code)
	}
	// A 32-character name is fine, and names differing beyond case are
	// distinct.
	for _, name := range []string{"abcdefghijklmnopqrstuvwxyz012345", "Ärgerlich"} {
		if _, err := f.s.CreatePlayer(f.ctx, name, game.RolePlayer, mustHash()); err != nil {
			t.Errorf("CreatePlayer(%q): %v", name, err)
		}
	}

	// A name is found by its key: case and look-alike letters do not matter.
	for _, name := range []string{"Ärger", "äRGER", "ärger"} {
		got, err = f.s.PlayerByName(f.ctx, name)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("PlayerByName(%q) = %+v, %v; want %+v", name, got, err, want)
		}
	}
	_, err = f.s.PlayerByName(f.ctx, "Ärge")
	wantCode(t, "PlayerByName unknown", err, game.ENOTFOUND)

	_, err = f.s.PlayerByTokenHash(f.ctx, game.HashToken("bp_nope"))
	wantCode(t, "PlayerByTokenHash unknown", err, game.ENOTFOUND)
	_, err = f.s.PlayerByID(f.ctx, uuid.New())
	wantCode(t, "PlayerByID unknown", err, game.ENOTFOUND)

	if err := f.s.SetRole(f.ctx, p.ID, game.RoleAuthor); err != nil {
		t.Fatalf("SetRole: %v", err)
	}
	got, _ = f.s.PlayerByID(f.ctx, p.ID)
	if got.Role != game.RoleAuthor {
		t.Errorf("role after SetRole = %q, want author", got.Role)
	}
	wantCode(t, "SetRole unknown player", f.s.SetRole(f.ctx, uuid.New(), game.RoleAdmin), game.ENOTFOUND)
	wantCode(t, "SetRole bad role", f.s.SetRole(f.ctx, p.ID, game.Role("root")), game.EINVALID)

	if err := f.s.Ping(f.ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// testPlayerNamesAlike checks the name rule's two keys (game.NameKey and
// game.NameLowerKey): a name is refused when it is one name with a stored
// one under either key, in whichever order the two arrive, and a lookup by
// either name finds the stored player; names a reader tells apart are both
// taken. Each row's names end in the row's own number, so rows do not meet.
func testPlayerNamesAlike(t *testing.T, f *fixture) {
	tests := []struct {
		first, second string
		alike         bool
	}{
		{"admin", "adm\u0131n", true}, // dotless ı
		{"adm\u0131n", "ADMIN", true},
		{"ADMIN", "admin", true},   // a capital I read without case
		{"admin", "Admin", true},   // case
		{"ADMIN", "ADMLN", true},   // a capital I drawn as an l
		{"lambda", "Iambda", true}, // a capital I drawn as an l
		{"eve", "\u0435ve", true},  // Cyrillic е
		{"ΣΟΦΟΣ", "ΣOΦOΣ", true},   // Latin O among Greek capitals
		{"admin", "admln", false},  // told apart in lower case
		{"ADMIN", "admln", false},  // and in any case
		{"admin", "ADMLN", false},
		{"Iambda", "iambada", false},
		{"ada", "adam", false},
	}
	for i, tt := range tests {
		for j, order := range [][2]string{{tt.first, tt.second}, {tt.second, tt.first}} {
			suffix := fmt.Sprintf(" %d", 2*i+j)
			stored := f.player(order[0] + suffix)
			p, err := f.s.CreatePlayer(f.ctx, order[1]+suffix, game.RolePlayer, mustHash())
			switch {
			case tt.alike && game.ErrorCode(err) != game.ECONFLICT:
				t.Errorf("CreatePlayer(%q) beside %q = %v; want a conflict", order[1]+suffix, stored.Name, err)
			case !tt.alike && err != nil:
				t.Errorf("CreatePlayer(%q) beside %q: %v; want both names", order[1]+suffix, stored.Name, err)
			}
			want := stored
			if !tt.alike {
				want = p
			}
			if got, err := f.s.PlayerByName(f.ctx, order[1]+suffix); err != nil || got.ID != want.ID {
				t.Errorf("PlayerByName(%q) = %q, %v; want %q", order[1]+suffix, got.Name, err, want.Name)
			}
		}
	}
	// "ADMIN" is one name with "admin" and with "ADMLN", which are two
	// names: a lookup finds the one it matches without case.
	admin, _ := f.player("admin x"), f.player("ADMLN x")
	if got, err := f.s.PlayerByName(f.ctx, "ADMIN x"); err != nil || got.ID != admin.ID {
		t.Errorf("PlayerByName(%q) = %q, %v; want %q", "ADMIN x", got.Name, err, admin.Name)
	}
}

func mustHash() []byte {
	_, h := game.NewToken()
	return h
}

// testPlayerNamesConcurrent checks that name uniqueness is atomic.
func testPlayerNamesConcurrent(t *testing.T, f *fixture) {
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := "Racer"
			if i%2 == 1 {
				name = "rACER"
			}
			_, errs[i] = f.s.CreatePlayer(f.ctx, name, game.RolePlayer, mustHash())
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch game.ErrorCode(err) {
		case "":
			ok++
		case game.ECONFLICT:
		default:
			t.Errorf("CreatePlayer %d: %v", i, err)
		}
	}
	if ok != 1 {
		t.Errorf("%d concurrent CreatePlayer calls with one name succeeded, want 1", ok)
	}
}
