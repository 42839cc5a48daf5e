-- Server-side session lifetime (lib/session): a token with expires_at stops working then, and one
-- with idle_timeout_seconds stops working that long after its last use. API tokens keep both null.
alter table api_tokens add column if not exists expires_at timestamptz;
alter table api_tokens add column if not exists idle_timeout_seconds integer;
-- Sessions started before this migration get the defaults of SESSION_MAX_AGE_HOURS and SESSION_IDLE_MINUTES.
update api_tokens
   set expires_at = created_at + interval '720 hours', idle_timeout_seconds = 10080 * 60
 where label = 'dashboard-session' and expires_at is null;
create index if not exists api_tokens_user_label_idx on api_tokens (user_id, label);
