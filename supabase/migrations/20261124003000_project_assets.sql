-- The durable record of each project's assets (lib/assets): the sandbox's assets/manifest.json is
-- rebuilt from it after a sandbox restart or for a new sandbox, and the maintenance command
-- (`npm run assets:reconcile`) compares it with the blob index. The bytes live in the blob store.
create table if not exists project_assets (
  project_id uuid not null references projects(id) on delete cascade,
  filename text not null,
  blob_url text not null,
  content_type text not null,
  size integer not null,
  updated_at timestamptz not null default now(),
  primary key (project_id, filename)
);
