-- Snapshot exports and imports of the local emulator's deployments (lib/emulator/snapshot-*.ts),
-- what `npx convex export` and `npx convex import` watch. The ZIP of an export and the uploaded
-- file of an import are blobs of the product's blob store; these rows say where and how far.
create table if not exists emulator_snapshot_exports (
  -- A deployment keeps its latest export, as the CLI asks for (`_system/cli/exports:getLatest`).
  deployment_name text primary key references emulator_deployments(name) on delete cascade,
  -- Nanoseconds since the epoch, as Convex's timestamps; the download path names it.
  start_ts bigint not null,
  complete_ts bigint not null,
  include_storage boolean not null,
  blob_pathname text not null
);

create table if not exists emulator_snapshot_imports (
  id bigserial primary key,
  deployment_name text not null references emulator_deployments(name) on delete cascade,
  -- `{format: "zip"}` or `{format: "jsonl" | "json_array", table}`, as `_snapshot_imports.format`.
  format jsonb not null,
  mode text not null,
  -- `_snapshot_imports.state`: waiting_for_confirmation, in_progress, completed or failed.
  state jsonb not null,
  -- The uploaded file until the import completed or failed.
  blob_pathname text,
  created_at timestamptz not null default now()
);
create index if not exists emulator_snapshot_imports_deployment on emulator_snapshot_imports (deployment_name, id);
