CREATE TABLE `event_counts` (
	`organization_id` integer NOT NULL,
	`property` text NOT NULL,
	`value` text NOT NULL,
	`hour` text NOT NULL,
	`event_count` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `property`, `value`, `hour`)
) WITHOUT ROWID;
--> statement-breakpoint
-- WITHOUT ROWID (written here by hand: drizzle-kit cannot say it): the rows are stored in their
-- primary key's order, so a list reads an organization's hours of one value as one range.
-- Every event counts once in its hour, in the all-events row ('', '') and in the row of each of
-- its category, type and source, whoever writes or removes it (routing, an import, retention's
-- sweep, an operator's fix). Events are never updated. timestamp is ISO 8601 UTC text
-- (YYYY-MM-DDTHH:MM:SS.sssZ), so its hour is its first 13 characters. An hour's row that reaches
-- zero goes, so the rows are those of the hours that hold events. In a trigger, SQLite needs
-- the WHERE before an upsert's ON CONFLICT to parse it.
CREATE TRIGGER `events_count_insert` AFTER INSERT ON `events`
BEGIN
  INSERT INTO `event_counts` (organization_id, property, value, hour, event_count)
  SELECT new.organization_id, '', '', substr(new.timestamp, 1, 13), 1
  WHERE true
  ON CONFLICT (organization_id, property, value, hour) DO UPDATE SET event_count = event_count + 1;
  INSERT INTO `event_counts` (organization_id, property, value, hour, event_count)
  SELECT new.organization_id, 'category', new.category, substr(new.timestamp, 1, 13), 1
  WHERE new.category IS NOT NULL
  ON CONFLICT (organization_id, property, value, hour) DO UPDATE SET event_count = event_count + 1;
  INSERT INTO `event_counts` (organization_id, property, value, hour, event_count)
  SELECT new.organization_id, 'type', new.type, substr(new.timestamp, 1, 13), 1
  WHERE new.type IS NOT NULL
  ON CONFLICT (organization_id, property, value, hour) DO UPDATE SET event_count = event_count + 1;
  INSERT INTO `event_counts` (organization_id, property, value, hour, event_count)
  SELECT new.organization_id, 'source', new.source, substr(new.timestamp, 1, 13), 1
  WHERE new.source IS NOT NULL
  ON CONFLICT (organization_id, property, value, hour) DO UPDATE SET event_count = event_count + 1;
END;--> statement-breakpoint
CREATE TRIGGER `events_count_delete` AFTER DELETE ON `events`
BEGIN
  UPDATE `event_counts` SET event_count = event_count - 1
  WHERE organization_id = old.organization_id AND property = '' AND value = ''
    AND hour = substr(old.timestamp, 1, 13);
  DELETE FROM `event_counts`
  WHERE organization_id = old.organization_id AND property = '' AND value = ''
    AND hour = substr(old.timestamp, 1, 13) AND event_count = 0;
  UPDATE `event_counts` SET event_count = event_count - 1
  WHERE organization_id = old.organization_id AND property = 'category' AND value = old.category
    AND hour = substr(old.timestamp, 1, 13);
  DELETE FROM `event_counts`
  WHERE organization_id = old.organization_id AND property = 'category' AND value = old.category
    AND hour = substr(old.timestamp, 1, 13) AND event_count = 0;
  UPDATE `event_counts` SET event_count = event_count - 1
  WHERE organization_id = old.organization_id AND property = 'type' AND value = old.type
    AND hour = substr(old.timestamp, 1, 13);
  DELETE FROM `event_counts`
  WHERE organization_id = old.organization_id AND property = 'type' AND value = old.type
    AND hour = substr(old.timestamp, 1, 13) AND event_count = 0;
  UPDATE `event_counts` SET event_count = event_count - 1
  WHERE organization_id = old.organization_id AND property = 'source' AND value = old.source
    AND hour = substr(old.timestamp, 1, 13);
  DELETE FROM `event_counts`
  WHERE organization_id = old.organization_id AND property = 'source' AND value = old.source
    AND hour = substr(old.timestamp, 1, 13) AND event_count = 0;
END;--> statement-breakpoint
-- The events stored before this migration.
INSERT INTO `event_counts` (organization_id, property, value, hour, event_count)
SELECT organization_id, property, value, hour, count(*) FROM (
  SELECT organization_id, '' AS property, '' AS value, substr(timestamp, 1, 13) AS hour FROM events
  UNION ALL
  SELECT organization_id, 'category', category, substr(timestamp, 1, 13) FROM events
  WHERE category IS NOT NULL
  UNION ALL
  SELECT organization_id, 'type', type, substr(timestamp, 1, 13) FROM events WHERE type IS NOT NULL
  UNION ALL
  SELECT organization_id, 'source', source, substr(timestamp, 1, 13) FROM events
  WHERE source IS NOT NULL
)
GROUP BY 1, 2, 3, 4;
