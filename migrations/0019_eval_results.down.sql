-- The evals of uploaded runs are decision evidence (a plan's
-- serve_what_you_evaluated requirement rests on them): reverting this
-- migration must not erase them. It refuses while the table holds rows,
-- naming how many and how to export them; an operator who has exported
-- them (or decided they may go) empties the table (TRUNCATE) and runs
-- `migrate down` again.
-- The lock first, so that no upload adds a row between the count and the
-- drop (the migrator waits at most 3 s for it and retries).
LOCK TABLE eval_results IN ACCESS EXCLUSIVE MODE;
DO $$
DECLARE
  stored bigint;
BEGIN
  SELECT count(*) INTO stored FROM eval_results;
  IF stored > 0 THEN
    RAISE EXCEPTION USING
      ERRCODE = 'object_not_in_prerequisite_state',
      MESSAGE = format(
        'eval_results holds %s rows (the evals of uploaded runs): reverting '
        'migration 0019 would delete them; nothing was changed', stored),
      HINT = 'Export them first: psql "$DATABASE_URL" -c "\copy eval_results '
             'TO ''eval_results.csv'' WITH (FORMAT csv, HEADER)"; then, only '
             'if they may go, TRUNCATE eval_results and run migrate down '
             'again. A rollback of the binary needs no '
             'down: the releases before 19 serve this schema.';
  END IF;
END
$$;
DROP TABLE eval_results;
