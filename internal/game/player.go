package game

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Role is what a player may do beyond playing.
type Role string

const (
	RolePlayer Role = "player"
	RoleAuthor Role = "author" // may publish levels
	RoleAdmin  Role = "admin"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RolePlayer, RoleAuthor, RoleAdmin:
		return true
	}
	return false
}

// Player is an account. Its token is never part of it: the store keeps only
// the token's hash, see NewToken.
type Player struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// Limits on a player's name, checked by the caller (the store only enforces
// uniqueness).
const (
	MinNameLen = 1
	MaxNameLen = 32
)

// TokenPrefix starts every API token so that leaked tokens are easy to spot.
const TokenPrefix = "bp_"

// NewToken returns a new random API token and the hash under which it is
// stored. The plaintext is shown to the player once and never stored.
func NewToken() (plaintext string, hash []byte) {
	var raw [32]byte
	// crypto/rand.Read never returns an error since Go 1.24 (it crashes the
	// program instead if the system's randomness is unavailable).
	_, _ = rand.Read(raw[:])
	plaintext = TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return plaintext, HashToken(plaintext)
}

// HashToken returns the SHA-256 of a plaintext token. A fast hash suffices:
// tokens carry 256 bits of entropy, so there is nothing to brute-force.
func HashToken(plaintext string) []byte {
	sum := sha256.Sum256([]byte(plaintext))
	return sum[:]
}

// ValidName reports every problem with a player name, for callers that want
// the same rule as everyone else (name.go): the name must be valid and
// already in its canonical form. field is the JSON path to report.
func ValidName(field, name string) []FieldError {
	canonical, fe := CanonicalName(field, name)
	if fe != nil {
		return fe
	}
	if canonical != name {
		return []FieldError{{Field: field, Reason: "must be in its canonical form " + strconv.Quote(canonical) + " (NFKC, single spaces, none at either end)"}}
	}
	return nil
}

// TokenHashLen is the length of a token hash (SHA-256).
const TokenHashLen = sha256.Size

// NewPlayer checks the arguments of a store's CreatePlayer and returns the
// player to store, with a new UUIDv7 and createdAt normalised by Timestamp.
func NewPlayer(name string, role Role, tokenHash []byte, createdAt time.Time) (Player, error) {
	fe := ValidName("name", name)
	if !role.Valid() {
		fe = append(fe, FieldError{Field: "role", Reason: "must be player, author or admin"})
	}
	if len(tokenHash) != TokenHashLen {
		fe = append(fe, FieldError{Field: "token_hash", Reason: "must be a SHA-256 hash"})
	}
	if err := Invalid("invalid player", fe); err != nil {
		return Player{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Player{}, err
	}
	return Player{ID: id, Name: name, Role: role, CreatedAt: Timestamp(createdAt)}, nil
}
