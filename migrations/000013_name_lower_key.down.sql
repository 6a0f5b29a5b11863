ALTER TABLE players DROP COLUMN IF EXISTS name_lower_key;
