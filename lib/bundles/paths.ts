/** Spec 2.9: every blob of a static bundle lives under `bundles/<project_id>/<commit_id>/`. */
export const bundlePrefix = (projectId: string, commitId?: string) =>
  commitId === undefined ? `bundles/${projectId}/` : `bundles/${projectId}/${commitId}/`;
