import path from "node:path";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";
import { testSandboxDriver } from "../contract/sandbox";
import { directoryE2BLib } from "./fake-e2b";

// The E2B driver against the fake SDK's directory-backed mode: real files and real bash, so the
// driver's own logic (error mapping, whole lines, kill of a process tree, template seeding,
// restart) meets the same contract as the local driver.
testSandboxDriver({
  name: "e2b (fake SDK on a local directory)",
  createProvider: () =>
    createE2BSandboxProvider({ apiKey: "e2b_contract_test_key", lib: directoryE2BLib(path.join(process.env.DATA_DIR!, "e2b-sandboxes")) }),
  // By design an E2B sandbox is a machine of its own: its files API may read its `/etc/passwd`, so
  // the driver confines nothing to `/home/user` and the confinement case does not apply.
  confinedToHome: false,
  isProcessGone: async (pid) => !(await isProcessAlive(pid)),
});
