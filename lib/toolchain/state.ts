/**
 * Where an install of the app toolchain is: `resolving` while npm reads package manifests,
 * `downloading` while it fetches (or takes from its cache) and unpacks package tarballs (the
 * downloaded bytes tell how far it is), `finishing` while the app's lock file is written and the
 * shared files made read-only.
 */
export type ToolchainPhase = "resolving" | "downloading" | "finishing";

/** Counts of an install under way, as npm reports them. */
export interface ToolchainProgress {
  phase: ToolchainPhase;
  /** Package manifests npm has read (from the registry or its cache). */
  manifests: number;
  /** Package tarballs npm is fetching or unpacking from its cache (it starts on all of them at once). */
  packages: number;
  /** Bytes the npm cache has grown by since the install started: what came from the registry. */
  bytes: number;
}

/** What the app toolchain is doing; shown on the dashboard, so it holds nothing secret. */
export type ToolchainState =
  | { state: "idle" }
  | ({ state: "preparing"; since: string } & ToolchainProgress)
  | { state: "ready" }
  | { state: "failed"; message: string };
