-- Structured error notifications (lib/devlog/structure.ts): an error is stored once while it is
-- unresolved (a repeat with the same fingerprint from the same source is not sent again), and a
-- later success of that source's dev server sets resolved_at on every unresolved one. Rows of
-- resolved notifications and older rows have no fingerprint and take part in neither.
alter table error_notifications add column if not exists source text;
alter table error_notifications add column if not exists fingerprint text;
alter table error_notifications add column if not exists resolved_at timestamptz;

create index if not exists error_notifications_unresolved_idx
  on error_notifications (project_id, source, fingerprint)
  where resolved_at is null and fingerprint is not null;
