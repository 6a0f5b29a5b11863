-- A second key under which player names are unique (game.NameLowerKey: the
-- confusable skeleton of the name in lower case, so that "ADMIN" and
-- "admin" are one name). It is computed in Go: a stored player gets it when
-- Store.RekeyNames brings its keys up to the current rule, in the
-- background; until then it is NULL, which the unique constraint allows.
ALTER TABLE players ADD COLUMN name_lower_key text CONSTRAINT players_name_lower_key_key UNIQUE;
