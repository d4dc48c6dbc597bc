-- Substring search on event descriptions through a trigram index (FTS5). External content: the
-- text stays only in events, the index holds the trigrams. Events are append-only (never updated
-- or deleted), so indexing each new event once keeps it in step. Every event has an entry, NULL
-- descriptions too (no trigrams), so FTS5's integrity-check can compare the index with events.
-- The trigger indexes the events the service writes itself (no import key). The import indexes
-- its events with one INSERT ... SELECT per batch instead (event-import.ts): a virtual-table
-- insert from a trigger costs about six times as much per row.
CREATE VIRTUAL TABLE `events_description_fts` USING fts5(
  description,
  content = 'events',
  content_rowid = 'id',
  tokenize = 'trigram case_sensitive 0'
);--> statement-breakpoint
CREATE TRIGGER `events_description_fts_insert` AFTER INSERT ON `events`
WHEN new.import_key IS NULL
BEGIN
  INSERT INTO `events_description_fts` (rowid, description) VALUES (new.id, new.description);
END;--> statement-breakpoint
INSERT INTO `events_description_fts` (rowid, description)
  SELECT id, description FROM events;
