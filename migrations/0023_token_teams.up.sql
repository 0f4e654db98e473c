-- Teams (docs/SECURITY.md, Teams): a token may be bound to teams, and a
-- run's sample stream belongs to the team it was opened for.
--
-- Two columns with constant defaults: each a catalog change (no rewrite,
-- no scan) under a brief ACCESS EXCLUSIVE lock, which the migrator waits
-- for at most 3 s.
--
--   api_tokens.teams     the teams a token is bound to; empty (every token
--                        made before): unbound, every team, as before. Set
--                        once, at creation; the change stamp of 0009 brings
--                        a new token to every replica's snapshot as before.
--   sample_streams.team  the team a run's stream was opened for; '' for a
--                        stream opened before, or for no team.
--
-- schema_compatibility: unchanged. A binary built before 23 never reads or
-- writes these columns, and is correct for every unbound token; it does
-- not know bindings, and would serve a bound token with its role's reach
-- on every team: tokens are bound once no replica of an older release is
-- left (docs/SECURITY.md).

ALTER TABLE api_tokens ADD COLUMN teams text[] NOT NULL DEFAULT '{}';
ALTER TABLE sample_streams ADD COLUMN team text NOT NULL DEFAULT '';
