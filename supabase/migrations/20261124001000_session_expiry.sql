-- Server-side session lifetime (lib/session): a token with max_age_seconds stops working that
-- long after created_at, and one with idle_timeout_seconds that long after its last use.
-- API tokens keep both null and never expire.
alter table api_tokens add column if not exists max_age_seconds integer;
alter table api_tokens add column if not exists idle_timeout_seconds integer;
-- Sessions started before this migration get the defaults of SESSION_MAX_AGE_HOURS and SESSION_IDLE_MINUTES.
update api_tokens
   set max_age_seconds = 720 * 3600, idle_timeout_seconds = 10080 * 60
 where label = 'dashboard-session' and max_age_seconds is null;
create index if not exists api_tokens_user_label_idx on api_tokens (user_id, label);
