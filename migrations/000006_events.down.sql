DROP TABLE IF EXISTS event_results;
DROP TABLE IF EXISTS event_entrants;
DROP TABLE IF EXISTS event_submissions;
DROP TABLE IF EXISTS events;
