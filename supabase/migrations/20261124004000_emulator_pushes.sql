-- Code pushed to emulated deployments (issue 16): what `convex dev` / `convex deploy` sent, the
-- analysis of its modules (functions, HTTP routes, schema, auth providers), and which push is live.
-- A push is written at start_push and becomes the deployment's live code at finish_push.

create table if not exists emulator_pushes (
  id text primary key,
  deployment_name text not null references emulator_deployments(name) on delete cascade,
  -- The functions directory and node version the CLI pushed (get_config_hashes answers them).
  config jsonb not null,
  -- Per module path: its analysed functions, HTTP routes and cron specs.
  analysis jsonb not null,
  -- The analysed schema ({tables, schemaValidation}), or null without convex/schema.ts.
  schema jsonb,
  -- Auth providers of convex/auth.config.ts.
  auth jsonb not null,
  -- The first stored document the pushed schema refuses ({tableName, error}); wait_for_schema reports it.
  schema_error jsonb,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);

create index if not exists emulator_pushes_deployment on emulator_pushes (deployment_name, finished_at);

create table if not exists emulator_modules (
  push_id text not null references emulator_pushes(id) on delete cascade,
  path text not null,
  environment text not null,
  source text not null,
  source_map text,
  sha256 text not null,
  primary key (push_id, path)
);

-- Documents of emulated deployments, as convex JSON (`convexToJson`), written by the functions the
-- deployment runs. Ids are the ones the function runtime handed out.
create table if not exists emulator_documents (
  deployment_name text not null references emulator_deployments(name) on delete cascade,
  id text not null,
  value jsonb not null,
  primary key (deployment_name, id)
);
