-- Realtime events too large for a NOTIFY payload (lib/store/notifications.ts): the notification
-- carries the row id and listeners read the text here. Rows older than a few minutes are deleted
-- on insert, since every listener reads its row as soon as the notification arrives.
create table if not exists realtime_messages (
  id bigserial primary key,
  body text not null,
  created_at timestamptz not null default now()
);

create index if not exists realtime_messages_created_at_idx on realtime_messages (created_at);
