DROP INDEX IF EXISTS ratings_board;
CREATE INDEX ratings_board ON ratings (rating DESC, player_id) WHERE duels > 0;
DROP TABLE IF EXISTS rating_pairs;
ALTER TABLE ratings DROP COLUMN IF EXISTS rated_opponents, DROP COLUMN IF EXISTS opponents;
