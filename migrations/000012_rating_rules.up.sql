-- Ratings that resist farming (game.RateDuel): each player counts the
-- distinct opponents of their rated duels (opponents; five make them
-- established) and those against whom their rating moved (rated_opponents;
-- five put them on the ratings board). rating_pairs holds, per player and
-- opponent, that they met and when the player's rating last moved against
-- that opponent (NULL: never), which the rule of one rated duel per
-- opponent per day reads.
ALTER TABLE ratings
	ADD COLUMN opponents integer NOT NULL DEFAULT 0,
	ADD COLUMN rated_opponents integer NOT NULL DEFAULT 0;

CREATE TABLE rating_pairs (
	player_id   uuid NOT NULL REFERENCES players (id),
	opponent_id uuid NOT NULL REFERENCES players (id),
	rated_at    timestamptz,
	PRIMARY KEY (player_id, opponent_id)
);

-- Every duel rated before these rules moved both ratings.
INSERT INTO rating_pairs (player_id, opponent_id, rated_at)
SELECT player_id, opponent_id, max(ended_at) FROM (
	SELECT player_a AS player_id, player_b AS opponent_id, ended_at FROM duels WHERE state IN ('finished', 'forfeited')
	UNION ALL
	SELECT player_b, player_a, ended_at FROM duels WHERE state IN ('finished', 'forfeited')
) d GROUP BY player_id, opponent_id;

UPDATE ratings r SET opponents = c.n, rated_opponents = c.n
FROM (SELECT player_id, count(*) AS n FROM rating_pairs GROUP BY player_id) c
WHERE c.player_id = r.player_id;

-- The board's predicate repeats game.BoardOpponents (pgstore.Ratings uses
-- the same literal so that the planner can use this index).
DROP INDEX ratings_board;
CREATE INDEX ratings_board ON ratings (rating DESC, player_id) WHERE rated_opponents >= 5;
