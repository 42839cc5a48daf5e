import path from "node:path";
import { createLocalSandboxProvider } from "@/lib/sandbox/drivers/local";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";
import { testSandboxDriver } from "../contract/sandbox";

testSandboxDriver({
  name: "local",
  createProvider: () => createLocalSandboxProvider({ root: path.join(process.env.DATA_DIR!, "sandboxes") }),
  isProcessGone: async (pid) => !(await isProcessAlive(pid)),
});
