/** What the app toolchain is doing; shown on the dashboard, so it holds nothing secret. */
export type ToolchainState =
  | { state: "idle" }
  | { state: "preparing"; since: string; packages: number }
  | { state: "ready" }
  | { state: "failed"; message: string };
