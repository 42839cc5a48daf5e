/**
 * The dev servers of the user's app that run inside a sandbox: today the app's Expo dev server
 * (the backend's dev server is part of the backend wiring, lib/cloud). Product logic on top of
 * the sandbox port, so it lives outside lib/sandbox.
 */
export {
  APP_DEV_PORT,
  APP_DEV_SERVER_ROLE,
  ensureAppDevServer,
  getAppPreviewUrl,
  restartAppDevServer,
  startAppDevServer,
  stopAppDevServer,
  type AppDevServer,
  type AppDevServerOptions,
} from "./app-dev-server";
