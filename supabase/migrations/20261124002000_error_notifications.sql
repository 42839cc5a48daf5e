-- Error-notification history (lib/realtime/error-notifications.ts): the last notifications of each
-- project, trimmed on insert. The row id is the SSE event id, so a client's Last-Event-ID stays
-- valid across server restarts.
create table if not exists error_notifications (
  id bigserial primary key,
  project_id uuid not null references projects(id) on delete cascade,
  payload jsonb not null,
  created_at timestamptz not null default now()
);

create index if not exists error_notifications_project_id_idx on error_notifications (project_id, id);
