-- Levels have an owner: the author who created the slug. Only the owner (or
-- an admin) may change a level; built-in levels and levels created by the
-- configured admin token (which is not a player) have none. Every version
-- of a slug carries the owner of its first version.
ALTER TABLE levels ADD COLUMN owner_id uuid REFERENCES players (id);
CREATE INDEX levels_owner ON levels (owner_id) WHERE owner_id IS NOT NULL;
