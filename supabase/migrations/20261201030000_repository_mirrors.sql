-- The newest off-sandbox copy of each project's app repository (lib/repository-mirror): an encrypted
-- git bundle in the blob store, what it holds, the last mirror failure, and the last rebuild of a
-- lost sandbox from it.
create table if not exists repository_mirrors (
  project_id uuid primary key references projects(id) on delete cascade,
  blob_pathname text,
  head_commit text,
  branch text,
  -- The commit of the working tree (refs/mirror/wip); null when it matched HEAD.
  wip_commit text,
  -- HEAD and the working tree's tree id: an autosave of an unchanged repository stores nothing.
  fingerprint text,
  size_bytes bigint,
  mirrored_at timestamptz,
  last_error text,
  last_error_at timestamptz,
  restored_at timestamptz,
  restored_mirrored_at timestamptz,
  restored_head_commit text,
  restored_working_tree boolean
);
