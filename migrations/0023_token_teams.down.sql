-- Without api_tokens.teams a bound token would reach every team: refuse
-- while an unrevoked one exists, rather than widen it silently.
DO $$
DECLARE
  bound bigint;
BEGIN
  SELECT count(*) INTO bound FROM api_tokens
  WHERE teams <> '{}' AND revoked_at IS NULL;
  IF bound > 0 THEN
    RAISE EXCEPTION 'api_tokens holds % unrevoked token(s) bound to teams; without migration 0023 they would reach every team: revoke them first (placectl tokens list; placectl tokens revoke ID)', bound;
  END IF;
END
$$;

ALTER TABLE sample_streams DROP COLUMN team;
ALTER TABLE api_tokens DROP COLUMN teams;
