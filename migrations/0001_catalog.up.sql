-- The SKU catalog and the pools built from it.

CREATE TABLE skus (
  sku_id                text PRIMARY KEY,
  family                text NOT NULL,
  architecture          text NOT NULL,
  memory_gb             double precision NOT NULL CHECK (memory_gb > 0),
  memory_type           text NOT NULL,
  memory_bandwidth_gb_s double precision NOT NULL CHECK (memory_bandwidth_gb_s > 0),
  form_factor           text NOT NULL CHECK (form_factor IN ('PCIe', 'SXM4', 'SXM5')),
  -- What the card can do; 0 = no NVLink at all.
  max_nvlink_gb_s       double precision NOT NULL CHECK (max_nvlink_gb_s >= 0),
  pcie_gen              integer NOT NULL,
  bf16_dense_tflops     double precision NOT NULL CHECK (bf16_dense_tflops > 0),
  -- NULL: no FP8 tensor cores.
  fp8_dense_tflops      double precision CHECK (fp8_dense_tflops > 0),
  tdp_w                 integer NOT NULL,
  notes                 text NOT NULL DEFAULT ''
);

-- Public datasheet figures (dense tensor throughput, nominal GB), from the
-- vendors' datasheets as collected in gpu_skus.csv.
INSERT INTO skus (sku_id, family, architecture, memory_gb, memory_type,
                  memory_bandwidth_gb_s, form_factor, max_nvlink_gb_s, pcie_gen,
                  bf16_dense_tflops, fp8_dense_tflops, tdp_w, notes) VALUES
  ('L4-PCIE-24GB', 'L4', 'Ada Lovelace', 24, 'GDDR6', 300, 'PCIe', 0, 4, 121, 242.5, 72, 'inference card; no NVLink'),
  ('A10-PCIE-24GB', 'A10', 'Ampere', 24, 'GDDR6', 600, 'PCIe', 0, 4, 125, NULL, 150, 'inference card; no NVLink; no FP8'),
  ('L40S-PCIE-48GB', 'L40S', 'Ada Lovelace', 48, 'GDDR6', 864, 'PCIe', 0, 4, 362, 733, 350, 'inference-class card; no NVLink at all'),
  ('A100-PCIE-40GB', 'A100', 'Ampere', 40, 'HBM2', 1555, 'PCIe', 600, 4, 312, NULL, 250, 'NVLink only through a bridge joining a pair; no FP8'),
  ('A100-PCIE-80GB', 'A100', 'Ampere', 80, 'HBM2e', 1935, 'PCIe', 600, 4, 312, NULL, 300, 'NVLink only through a bridge joining a pair; no FP8'),
  ('A100-SXM4-40GB', 'A100', 'Ampere', 40, 'HBM2', 1555, 'SXM4', 600, 4, 312, NULL, 400, 'HGX boards join 4 or 8 through NVLink/NVSwitch; no FP8'),
  ('A100-SXM4-80GB', 'A100', 'Ampere', 80, 'HBM2e', 2039, 'SXM4', 600, 4, 312, NULL, 400, 'HGX boards join 4 or 8 through NVLink/NVSwitch; no FP8'),
  ('H100-PCIE-80GB', 'H100', 'Hopper', 80, 'HBM2e', 2000, 'PCIe', 600, 5, 756, 1513, 350, 'NVLink only through a bridge joining a pair'),
  ('H100-NVL-94GB', 'H100', 'Hopper', 94, 'HBM3', 3900, 'PCIe', 600, 5, 835, 1671, 400, 'sold as bridged pairs'),
  ('H100-SXM5-80GB', 'H100', 'Hopper', 80, 'HBM3', 3350, 'SXM5', 900, 5, 989, 1979, 700, 'HGX boards join 8 through NVSwitch'),
  ('H200-SXM-141GB', 'H200', 'Hopper', 141, 'HBM3e', 4800, 'SXM5', 900, 5, 989, 1979, 700, 'HGX boards join 8 through NVSwitch');

CREATE TABLE pools (
  name                              text PRIMARY KEY
                                    CHECK (name ~ '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'),
  sku_id                            text NOT NULL REFERENCES skus (sku_id),
  node_count                        integer NOT NULL CHECK (node_count >= 1),
  gpus_per_node                     integer NOT NULL CHECK (gpus_per_node BETWEEN 1 AND 16),
  fabric                            text NOT NULL CHECK (fabric IN ('NVLINK', 'PCIE')),
  purpose                           text NOT NULL CHECK (purpose IN ('TRAINING', 'SERVING')),
  exclusive                         boolean NOT NULL,
  gpu_quota                         integer NOT NULL
                                    CHECK (gpu_quota >= 0 AND gpu_quota <= node_count * gpus_per_node),
  -- Money in integer micro-units so that sums never drift.
  internal_rate_micros_per_gpu_hour bigint NOT NULL CHECK (internal_rate_micros_per_gpu_hour > 0),
  list_price_micros_per_gpu_hour    bigint CHECK (list_price_micros_per_gpu_hour > 0),
  labels                            jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Idempotency key of the CreatePool call that made the pool.
  create_request_id                 text UNIQUE,
  create_time                       timestamptz NOT NULL DEFAULT now(),
  update_time                       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX pools_sku_id_idx ON pools (sku_id);
