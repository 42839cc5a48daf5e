-- Core tables of the cloud-backend service. Idempotent: safe on a database that already has them.

create table if not exists users (
  id uuid primary key default gen_random_uuid(),
  email text unique,
  name text not null,
  created_at timestamptz not null default now()
);

-- API tokens are stored as SHA-256 hex digests only; the plain token is shown once.
create table if not exists api_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  token_hash text not null unique,
  label text not null default 'api',
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);

create table if not exists projects (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users(id) on delete cascade,
  name text not null,
  sandbox_id text,
  preview_url text,
  -- Spec 2.1: null, {kind:"connecting"}, {kind:"connected",...} or {kind:"failed",errorMessage}.
  backend_project jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint projects_backend_project_kind check (
    backend_project is null or backend_project->>'kind' in ('connecting', 'connected', 'failed')
  )
);
create index if not exists projects_owner_created_idx on projects (owner_id, created_at);

-- Spec 2.6. admin_key and access_token hold AES-256-GCM ciphertexts (lib/secrets).
create table if not exists backend_project_credentials (
  project_id uuid primary key references projects(id) on delete cascade,
  user_id text not null,
  mode text not null check (mode in ('oauth', 'managed')),
  team_slug text not null,
  project_slug text not null,
  deployment_url text not null,
  deployment_name text not null,
  admin_key text not null,
  access_token text,
  -- Numeric id of the backend project, needed by deleteManagedProject.
  backend_project_id bigint,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Journal of enable/connect runs: which steps finished, so a retry resumes instead of re-provisioning.
create table if not exists enable_operations (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects(id) on delete cascade,
  kind text not null check (kind in ('enable', 'connect', 'oauth')),
  status text not null check (status in ('running', 'succeeded', 'failed')),
  lease_owner text,
  lease_expires_at timestamptz,
  steps jsonb not null default '{}'::jsonb,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- At most one live run per project.
create unique index if not exists enable_operations_one_running_idx
  on enable_operations (project_id) where status = 'running';

-- Metadata index of the fs blob driver; "C" collation so prefix ranges follow byte order.
create table if not exists blobs (
  pathname text collate "C" primary key,
  size bigint not null,
  content_type text not null,
  content_disposition text not null,
  cache_control text not null,
  etag text not null,
  uploaded_at timestamptz not null default now()
);
