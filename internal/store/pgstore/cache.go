package pgstore

import (
	"sync"
	"time"

	"backpressure/internal/game"
)

// How long a replica trusts what it read. Neither cache can make anything
// that matters stale; see the package documentation ("Caches").
const (
	// levelTTL bounds how long this replica may keep answering an old
	// version as the current one after another replica published a new
	// one. Writes check what was served (see levelCache.expectation).
	levelTTL = time.Second
	// tokenTTL bounds how long a promotion made on another replica can go
	// unseen here (the player keeps the lower role: it fails closed).
	tokenTTL = 10 * time.Second

	maxCachedLevels = 1024
	maxCachedTokens = 100_000
)

type cachedLevel struct {
	level game.Level
	at    time.Time
}

// levelCache holds the current version of each level as last read.
type levelCache struct {
	mu     sync.Mutex
	bySlug map[string]cachedLevel
}

func newLevelCache() *levelCache { return &levelCache{bySlug: map[string]cachedLevel{}} }

// current returns the cached current version of slug if it was read less
// than levelTTL before now.
func (c *levelCache) current(slug string, now time.Time) (game.Level, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.bySlug[slug]
	if !ok || now.Sub(e.at) >= levelTTL || now.Before(e.at) {
		return game.Level{}, false
	}
	return copyLevel(e.level), true
}

func (c *levelCache) put(l game.Level, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bySlug) >= maxCachedLevels {
		for k := range c.bySlug {
			delete(c.bySlug, k)
			break
		}
	}
	c.bySlug[l.Slug] = cachedLevel{level: copyLevel(l), at: now}
}

func (c *levelCache) forget(slug string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.bySlug, slug)
}

// expectation is what a write to (slug, version) must find for the level
// this replica last served as current: the same content, still current.
// A version this replica has not served as current carries no
// expectation ("", false), and is written as before.
func (c *levelCache) expectation(slug string, version int) (contentHash string, current bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.bySlug[slug]
	if !ok || e.level.Version != version {
		return "", false
	}
	return e.level.ContentHash, true
}

func copyLevel(l game.Level) game.Level {
	l.Definition = append([]byte(nil), l.Definition...)
	return l
}

type cachedPlayer struct {
	player game.Player
	at     time.Time
}

// tokenCache maps token hashes to players whose role is player, the lowest:
// a token's player, id, name and creation time never change, and a cached
// entry can only under-state the role (a promotion not yet seen), never
// grant one that was revoked. Authors and admins are read every time.
type tokenCache struct {
	mu     sync.Mutex
	byHash map[string]cachedPlayer
}

func newTokenCache() *tokenCache { return &tokenCache{byHash: map[string]cachedPlayer{}} }

func (c *tokenCache) get(hash []byte, now time.Time) (game.Player, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byHash[string(hash)]
	if !ok || now.Sub(e.at) >= tokenTTL || now.Before(e.at) {
		return game.Player{}, false
	}
	return e.player, true
}

func (c *tokenCache) put(hash []byte, p game.Player, now time.Time) {
	if p.Role != game.RolePlayer {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byHash) >= maxCachedTokens {
		for k := range c.byHash {
			delete(c.byHash, k)
			break
		}
	}
	c.byHash[string(hash)] = cachedPlayer{player: p, at: now}
}

// clear drops every entry: roles changed here are seen here at once.
func (c *tokenCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.byHash)
}
