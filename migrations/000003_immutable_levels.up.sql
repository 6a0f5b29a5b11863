-- A stored level version never changes: a change of content is a new version
-- (the store no longer replaces an unused version in place), so a submission
-- stored against (slug, version) was scored on exactly that content. The
-- trigger makes the rule the database's, not only the store's.
CREATE FUNCTION levels_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.slug IS DISTINCT FROM OLD.slug
		OR NEW.version IS DISTINCT FROM OLD.version
		OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
		OR NEW.definition::text IS DISTINCT FROM OLD.definition::text
		OR NEW.title IS DISTINCT FROM OLD.title
		OR NEW.difficulty IS DISTINCT FROM OLD.difficulty
		OR NEW.worst_case_cost IS DISTINCT FROM OLD.worst_case_cost
		OR NEW.board_id IS DISTINCT FROM OLD.board_id THEN
		RAISE EXCEPTION 'level % version % is stored and cannot change; store a new version', OLD.slug, OLD.version
			USING ERRCODE = 'integrity_constraint_violation';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER levels_immutable BEFORE UPDATE ON levels
	FOR EACH ROW EXECUTE FUNCTION levels_immutable();

-- Re-versioning a level takes its old version's bests off the global board in
-- the background, a batch of players per short transaction, instead of one
-- transaction holding the global board exclusively (see pgstore/drain.go).
-- global_drains lists the old boards still being taken off; left_global marks,
-- on such a board, the entries already subtracted from the global board (and
-- entries that were never on it: a pass on a version that is not current).
CREATE TABLE global_drains (
	board_id bigint PRIMARY KEY REFERENCES boards (id)
);
ALTER TABLE board_entries ADD COLUMN left_global boolean NOT NULL DEFAULT false;

-- What the server found when it stored a version, kept with it: the most one
-- run on it may cost, in path-ticks (0 for versions stored before).
ALTER TABLE levels ADD COLUMN worst_case_cost bigint NOT NULL DEFAULT 0 CHECK (worst_case_cost >= 0);
