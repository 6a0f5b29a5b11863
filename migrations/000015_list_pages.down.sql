DROP INDEX duels_by_b;
DROP INDEX duels_by_a;
CREATE INDEX duels_by_a ON duels (player_a, created_at);
CREATE INDEX duels_by_b ON duels (player_b, created_at);
DROP INDEX seasons_starts;
DROP INDEX levels_current_c;
