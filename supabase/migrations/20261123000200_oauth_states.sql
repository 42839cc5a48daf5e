-- Pending OAuth connects (GET /backend/connect → GET /backend/callback). One row per issued
-- `state`: the row is deleted when the callback uses it, which makes every state single-use.
-- Only a SHA-256 digest of the state's nonce is stored; the PKCE verifier is an AES-256-GCM
-- ciphertext (lib/secrets).
create table if not exists oauth_states (
  nonce_hash text primary key,
  user_id uuid not null references users(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  code_verifier text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
-- Expired rows are purged whenever a new state is issued.
create index if not exists oauth_states_expires_idx on oauth_states (expires_at);
