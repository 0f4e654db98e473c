DROP INDEX placements_created_idx;
CREATE INDEX placements_created_idx ON placements (created_at);
DROP INDEX placements_request_id_key;
ALTER TABLE placements ADD CONSTRAINT placements_request_id_key
  UNIQUE (request_id);
ALTER TABLE placements ADD CONSTRAINT placements_result_hash_fkey
  FOREIGN KEY (result_hash) REFERENCES plan_results;
