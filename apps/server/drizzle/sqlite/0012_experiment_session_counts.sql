CREATE TABLE `experiment_session_counts` (
	`experiment_id` integer NOT NULL,
	`slot_start` text NOT NULL,
	`variant_id` integer NOT NULL,
	`writer` integer NOT NULL,
	`session_count` integer NOT NULL,
	PRIMARY KEY(`experiment_id`, `slot_start`, `variant_id`, `writer`)
) WITHOUT ROWID;
--> statement-breakpoint
-- WITHOUT ROWID (written here by hand: drizzle-kit cannot say it): the rows are stored in their
-- primary key's order, so a timeline reads its window's counts as one range, with no second
-- lookup per row.
-- Each session counts once in its experiment's quarter hour, whoever writes it: routing inserts
-- sessions and never changes them, and the update and delete triggers keep the counts right for
-- anything else that does (an operator's fix, a test). created_at is ISO 8601 UTC text
-- (YYYY-MM-DDTHH:MM:SS.sssZ); its quarter hour is the text up to the hour and the minutes
-- rounded down to 00, 15, 30 or 45.
CREATE TRIGGER `sessions_count_insert` AFTER INSERT ON `sessions`
WHEN new.experiment_id IS NOT NULL
BEGIN
  INSERT INTO `experiment_session_counts`
    (experiment_id, slot_start, variant_id, writer, session_count)
  SELECT new.experiment_id,
    substr(new.created_at, 1, 14)
      || printf('%02d', CAST(substr(new.created_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000Z',
    new.variant_id, 0, 1
  WHERE new.experiment_id IS NOT NULL AND new.variant_id IS NOT NULL
  ON CONFLICT (experiment_id, slot_start, variant_id, writer)
    DO UPDATE SET session_count = session_count + excluded.session_count;
END;--> statement-breakpoint
CREATE TRIGGER `sessions_count_update`
AFTER UPDATE OF experiment_id, variant_id, created_at ON `sessions`
BEGIN
  INSERT INTO `experiment_session_counts`
    (experiment_id, slot_start, variant_id, writer, session_count)
  SELECT old.experiment_id,
    substr(old.created_at, 1, 14)
      || printf('%02d', CAST(substr(old.created_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000Z',
    old.variant_id, 0, -1
  WHERE old.experiment_id IS NOT NULL AND old.variant_id IS NOT NULL
  ON CONFLICT (experiment_id, slot_start, variant_id, writer)
    DO UPDATE SET session_count = session_count + excluded.session_count;
  INSERT INTO `experiment_session_counts`
    (experiment_id, slot_start, variant_id, writer, session_count)
  SELECT new.experiment_id,
    substr(new.created_at, 1, 14)
      || printf('%02d', CAST(substr(new.created_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000Z',
    new.variant_id, 0, 1
  WHERE new.experiment_id IS NOT NULL AND new.variant_id IS NOT NULL
  ON CONFLICT (experiment_id, slot_start, variant_id, writer)
    DO UPDATE SET session_count = session_count + excluded.session_count;
END;--> statement-breakpoint
CREATE TRIGGER `sessions_count_delete` AFTER DELETE ON `sessions`
BEGIN
  INSERT INTO `experiment_session_counts`
    (experiment_id, slot_start, variant_id, writer, session_count)
  SELECT old.experiment_id,
    substr(old.created_at, 1, 14)
      || printf('%02d', CAST(substr(old.created_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000Z',
    old.variant_id, 0, -1
  WHERE old.experiment_id IS NOT NULL AND old.variant_id IS NOT NULL
  ON CONFLICT (experiment_id, slot_start, variant_id, writer)
    DO UPDATE SET session_count = session_count + excluded.session_count;
END;--> statement-breakpoint
-- The sessions stored before this migration.
INSERT INTO `experiment_session_counts`
  (experiment_id, slot_start, variant_id, writer, session_count)
SELECT experiment_id,
  substr(sessions.created_at, 1, 14)
      || printf('%02d', CAST(substr(sessions.created_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000Z',
  variant_id, 0, count(*)
FROM `sessions`
WHERE experiment_id IS NOT NULL AND variant_id IS NOT NULL
GROUP BY 1, 2, 3;
