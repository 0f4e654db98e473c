ALTER TABLE pools
  DROP CONSTRAINT pools_inter_node_none_has_no_bandwidth,
  DROP COLUMN inter_node_gb_s_per_gpu,
  DROP COLUMN inter_node_fabric;
