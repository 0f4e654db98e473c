-- Back to 0026: the recount's steps and staging go. Rollup rows it has
-- recounted keep their figures, which are what cost_run_facts counts on the
-- schema this leaves too; up again recounts whatever is left, and finds
-- nothing to change in the rows already recounted.
DELETE FROM schema_backfills
WHERE name IN ('0027_cost_recount_stage', '0027_cost_recount_apply');
DROP FUNCTION placement_cost_recount_apply(text, integer);
DROP FUNCTION placement_cost_recount_stage(text, integer);
DROP TABLE cost_recount_rows;
