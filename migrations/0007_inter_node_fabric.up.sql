-- How the nodes of a pool are joined to each other (the fabric column says
-- how the GPUs inside one node are). UNSPECIFIED: never declared, so plans
-- assume a conservative bandwidth and warn; NONE keeps a job in one node.
ALTER TABLE pools
  ADD COLUMN inter_node_fabric text NOT NULL DEFAULT 'UNSPECIFIED'
    CHECK (inter_node_fabric IN ('UNSPECIFIED', 'NONE', 'ETHERNET', 'ROCE', 'INFINIBAND')),
  -- GB/s per GPU each way; 0 = not declared.
  ADD COLUMN inter_node_gb_s_per_gpu double precision NOT NULL DEFAULT 0
    CHECK (inter_node_gb_s_per_gpu >= 0 AND inter_node_gb_s_per_gpu <= 200),
  ADD CONSTRAINT pools_inter_node_none_has_no_bandwidth
    CHECK (inter_node_fabric <> 'NONE' OR inter_node_gb_s_per_gpu = 0);
