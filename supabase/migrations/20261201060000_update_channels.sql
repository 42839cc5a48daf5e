-- Expo Updates channels, staged rollouts and delivery checks (lib/updates).
-- A release belongs to a channel (the `expo-channel-name` header; `main` when absent) and may go
-- to a percentage of devices; the devices left out get the channel's newest full release.
alter table update_releases add column if not exists channel text not null default 'main';
alter table update_releases add column if not exists rollout_percent smallint not null default 100
  check (rollout_percent between 1 and 100);
drop index if exists update_releases_latest;
create index if not exists update_releases_channel_latest
  on update_releases (project_id, channel, platform, runtime_version, id desc);

-- Why the last delivery check of a bundle failed (null: it passed, or never ran). A bundle whose
-- check failed is never released.
alter table bundle_updates add column if not exists delivery_error text;
