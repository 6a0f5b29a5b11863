-- Every list the API serves is read a page at a time, by keyset: each page
-- is an index range scan that stops after the page, whatever the list's
-- length.

-- GET /v1/challenges: the levels outside the campaign, by slug in byte
-- order (COLLATE "C": the order the API promises, whatever the database's
-- collation).
CREATE INDEX levels_current_c ON levels ((slug COLLATE "C")) WHERE is_current;

-- GET /v1/seasons: the latest first.
CREATE INDEX seasons_starts ON seasons (starts_at);

-- GET /v1/duels: a player's duels, newest first, from either side; the id
-- breaks ties of creation time.
DROP INDEX duels_by_a;
DROP INDEX duels_by_b;
CREATE INDEX duels_by_a ON duels (player_a, created_at, id);
CREATE INDEX duels_by_b ON duels (player_b, created_at, id);
