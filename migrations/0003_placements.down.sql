DROP TABLE plan_outcomes;
DROP TABLE placements;
DROP TABLE plan_predictions;
DROP TABLE plan_results;
