-- Live app instances (lib/instance): one row per instance id, renewed by its heartbeat. A
-- restarted process keeps its instance id but registers a new boot id, which is how a run it
-- owned before the restart is known to be dead at once.
create table if not exists app_instances (
  instance_id text primary key,
  boot_id uuid not null,
  started_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  -- Set by the instance itself at each heartbeat (a few missed beats ahead).
  expires_at timestamptz not null
);

-- The instance (and boot) of a run's lease owner: a run whose owner is not alive is taken over
-- without waiting for its lease to run out. Null on runs journaled before this migration.
alter table enable_operations add column if not exists owner_instance_id text;
alter table enable_operations add column if not exists owner_boot_id uuid;
