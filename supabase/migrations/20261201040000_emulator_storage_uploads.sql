-- Upload URLs of the local emulator's file storage (lib/emulator/storage.ts): each token is used
-- once and expires an hour after it was issued, as Convex's `ctx.storage.generateUploadUrl()`
-- URLs do. Only the token's SHA-256 digest is kept.
create table if not exists emulator_storage_uploads (
  token_digest text primary key,
  deployment_name text not null references emulator_deployments(name) on delete cascade,
  issued_at timestamptz not null
);
create index if not exists emulator_storage_uploads_issued_at on emulator_storage_uploads (issued_at);
