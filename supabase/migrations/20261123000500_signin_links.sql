-- One-time dashboard sign-in links (lib/session): printed at start on the embedded default.
-- Only the SHA-256 hex digest of the link token is stored; a link works once, until it expires.
create table if not exists signin_links (
  token_hash text primary key,
  user_id uuid not null references users(id) on delete cascade,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists signin_links_expires_idx on signin_links (expires_at);
