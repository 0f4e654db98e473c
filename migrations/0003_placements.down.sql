DROP TRIGGER pools_changed ON pools;
DROP TRIGGER evidence_rollups_changed ON evidence_rollups;
DROP FUNCTION placement_notify_change();
DROP TABLE plan_outcomes;
DROP TABLE plan_predictions;
DROP TABLE placements;
