import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { testSandboxDriver } from "../contract/sandbox";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";

// The E2B driver on the real `e2b` SDK, against the local sandbox service (packages/sandbox-local):
// the same wire protocol as E2B's cloud, so the driver's own logic (error mapping, whole lines,
// kill of a process tree, template seeding, restart) and the service meet the same contract.
let service: SandboxServiceProcess;
beforeAll(async () => {
  service = await startSandboxService(path.join(process.env.DATA_DIR!, "sandbox-service"));
});
afterAll(async () => {
  await service?.stop();
});

testSandboxDriver({
  name: "e2b (real SDK on the local sandbox service)",
  createProvider: () => createE2BSandboxProvider({ apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url }),
  // By design an E2B sandbox is a machine of its own: its files API may read its `/etc/passwd`, so
  // the driver confines nothing to `/home/user` and the confinement case does not apply.
  confinedToHome: false,
  isProcessGone: (pid) => service.isSandboxProcessGone(pid),
});
