-- API tokens. Only a SHA-256 of each secret is stored: a token is 256 random
-- bits, so a fast hash is enough, and a stolen table grants nothing.
CREATE TABLE api_tokens (
  token_id     uuid PRIMARY KEY,
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
  role         text NOT NULL CHECK (role IN ('AGENT', 'PLANNER', 'FINANCE', 'ADMIN')),
  secret_hash  bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
