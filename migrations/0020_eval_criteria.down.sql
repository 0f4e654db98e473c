-- The declared eval criteria are decision records (what an eval must score
-- for a plan to pass): reverting this migration must not erase them. It
-- refuses while the table holds rows, naming how many and how to export
-- them (migration 0019's down says why and how).
LOCK TABLE eval_criteria IN ACCESS EXCLUSIVE MODE;
DO $$
DECLARE
  stored bigint;
BEGIN
  SELECT count(*) INTO stored FROM eval_criteria;
  IF stored > 0 THEN
    RAISE EXCEPTION USING
      ERRCODE = 'object_not_in_prerequisite_state',
      MESSAGE = format(
        'eval_criteria holds %s rows (the declared eval pass criteria): '
        'reverting migration 0020 would delete them; nothing was changed',
        stored),
      HINT = 'Export them first: psql "$DATABASE_URL" -c "\copy eval_criteria '
             'TO ''eval_criteria.csv'' WITH (FORMAT csv, HEADER)"; then, only '
             'if they may go, TRUNCATE eval_criteria and run migrate down '
             'again. A rollback of the binary needs no '
             'down: the releases before 20 serve this schema.';
  END IF;
END
$$;
DROP TABLE eval_criteria;
