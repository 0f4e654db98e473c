DROP TABLE eval_criteria;
