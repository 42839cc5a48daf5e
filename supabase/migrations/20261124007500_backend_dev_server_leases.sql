-- Which instance owns a project's backend dev server (lib/cloud/backend-dev-server-leases.ts):
-- the owner reads and scans its output. A lease whose owner boot is no longer alive, or that
-- its owner handed back at shutdown (owner null), is taken by another instance, which
-- re-attaches to the server (E2B: reconnects to `pid`; local: restarts it).
create table if not exists backend_dev_server_leases (
  project_id uuid primary key references projects(id) on delete cascade,
  sandbox_id text not null,
  owner_instance_id text,
  owner_boot_id uuid,
  -- The server's process in the sandbox.
  pid integer not null,
  updated_at timestamptz not null default now()
);
