-- A deployment paused through the deployment API (`POST /api/v1/pause_deployment`) refuses new
-- function calls until it is unpaused, as Convex's paused deployments do.
alter table emulator_deployments add column if not exists paused boolean not null default false;
