ALTER TABLE sample_streams DROP COLUMN IF EXISTS samples_dropped_at;
