import { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH } from "./identity";
import { createEmulator, type Emulator, type EmulatorOptions } from "./index";
import { listenOnLoopback } from "./node-http";

export interface EmulatorServer {
  /** `http://127.0.0.1:<port>/emulator`: the provision host of this emulator. */
  baseUrl: string;
  /** Dashboard host of this emulator (OAuth consent page). */
  dashboardUrl: string;
  port: number;
  emulator: Emulator;
  /** Stops listening, drops open connections and closes the emulator's deployment listeners. */
  close(): Promise<void>;
}

/**
 * Serves an emulator through node:http on 127.0.0.1 (tests, benchmarks), mounted at /emulator
 * like the app route. `port` 0 (default) picks a free port. Its deployments listen on their own ports.
 */
export async function startEmulatorServer(options: EmulatorOptions & { port?: number; emulator?: Emulator } = {}): Promise<EmulatorServer> {
  const emulator = options.emulator ?? createEmulator(options);
  const server = await listenOnLoopback(options.port ?? 0, (request) => emulator.handle(request));
  const baseUrl = `http://127.0.0.1:${server.port}${EMULATOR_MOUNT_PATH}`;
  return {
    baseUrl,
    dashboardUrl: baseUrl + EMULATOR_DASHBOARD_PREFIX,
    port: server.port,
    emulator,
    close: async () => {
      await server.close();
      await emulator.close();
    },
  };
}
