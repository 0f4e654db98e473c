DROP TABLE eval_results;
