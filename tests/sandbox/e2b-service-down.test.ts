import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxError } from "@/lib/sandbox";
import { createE2BSandboxProvider } from "@/lib/sandbox/drivers/e2b";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";

// The sandbox service is down or restarting: the e2b driver answers 503 sandbox_unavailable (an
// infrastructure fault, never a 500 or a "not found"), and works again once the service is back.
let service: SandboxServiceProcess | undefined;
afterAll(async () => {
  await service?.stop();
});

const expectUnavailable = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(SandboxError);
  expect(error).toMatchObject({ status: 503, code: "sandbox_unavailable" });
};

describe("e2b driver with the sandbox service down", () => {
  it("answers sandbox_unavailable while the service is down and recovers when it is back", async () => {
    const dataDir = path.join(process.env.DATA_DIR!, "sandbox-service");
    service = await startSandboxService(dataDir);
    const { port, apiKey, url } = service;
    const provider = createE2BSandboxProvider({ apiKey, apiUrl: url, sandboxUrl: url });
    const sandbox = await provider.create();
    expect((await sandbox.commands.run("echo up")).stdout).toBe("up\n");

    await service.stop();
    service = undefined;
    await expectUnavailable(sandbox.commands.run("echo down"));
    await expectUnavailable(sandbox.files.read("/home/user/anything"));
    await expectUnavailable(sandbox.files.list("/home/user"));
    await expectUnavailable(provider.connect(sandbox.sandboxId));
    await expectUnavailable(provider.create());

    service = await startSandboxService(dataDir, { port, apiKey });
    const again = await provider.create();
    expect((await again.commands.run("echo back")).stdout).toBe("back\n");
  });
});
