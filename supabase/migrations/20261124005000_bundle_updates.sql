-- Expo Updates (lib/updates): every uploaded bundle with its manifest, the release history that
-- says which bundle a (platform, runtime version) serves, and each project's code signing key.
-- Project ids are text without a foreign key: spec 4.4 files a bundle under any id, and
-- cleanup removes the rows with the blobs.
create table if not exists bundle_updates (
  project_id text not null,
  platform text not null,
  commit_sha text not null,
  commit_message text not null,
  runtime_version text not null,
  update_id uuid not null,
  -- The manifest exactly as served (the signature covers these bytes).
  manifest text not null,
  size bigint not null,
  created_at timestamptz not null,
  primary key (project_id, platform, commit_sha)
);

-- Append-only: the newest row of a (project, platform, runtime version) is what the update URL
-- serves. A null commit is a rollback to the update embedded in the app binary.
create table if not exists update_releases (
  id bigserial primary key,
  project_id text not null,
  platform text not null,
  runtime_version text not null,
  commit_sha text,
  released_at timestamptz not null default now()
);
create index if not exists update_releases_latest on update_releases (project_id, platform, runtime_version, id desc);

create table if not exists update_signing_keys (
  project_id text primary key,
  key_id text not null,
  -- lib/secrets ciphertext bound to the project; never leaves the server.
  private_key text not null,
  certificate text not null,
  created_at timestamptz not null default now()
);
