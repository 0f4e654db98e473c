-- Standards are decision records (who placed a recipe class on a pool, why,
-- and the bake-off that proves it): reverting this migration must not erase
-- them. It refuses while the table holds rows, retired ones included,
-- naming how many and how to export them (migration 0019's down says why
-- and how).
LOCK TABLE standards IN ACCESS EXCLUSIVE MODE;
DO $$
DECLARE
  stored bigint;
BEGIN
  SELECT count(*) INTO stored FROM standards;
  IF stored > 0 THEN
    RAISE EXCEPTION USING
      ERRCODE = 'object_not_in_prerequisite_state',
      MESSAGE = format(
        'standards holds %s rows (decision records, retired ones included): '
        'reverting migration 0021 would delete them; nothing was changed',
        stored),
      HINT = 'Export them first: psql "$DATABASE_URL" -c "\copy standards TO '
             '''standards.csv'' WITH (FORMAT csv, HEADER)"; then, only if they '
             'may go, TRUNCATE standards and run migrate down again. A '
             'rollback of the binary needs no down: the releases before 21 '
             'serve this schema.';
  END IF;
END
$$;
DROP TABLE standards;
