import "../helpers/real-dev-servers";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as devStartRoute } from "@/app/api/backend/dev/start/route";
import { GET as statusRoute } from "@/app/api/backend/status/route";
import type { ApiBackendStatus } from "@/lib/api-contract/types";
import { BACKEND_DEV_SERVER_ROLE, stopBackendDevServer } from "@/lib/cloud/backend-dev-server";
import { getBackendCredentials } from "@/lib/cloud/credentials";
import { enableCloudBackend } from "@/lib/cloud/enable";
import { ensureAppDevServer } from "@/lib/dev-servers";
import { buildErrorNotification } from "@/lib/realtime";
import { sendErrorNotification } from "@/lib/realtime/error-notifications";
import { APP_DIR, findProcessesByRole, type Sandbox } from "@/lib/sandbox";
import type { Project } from "@/lib/store/projects";
import { openProjectSandbox } from "@/lib/workspace";
import type { Page } from "puppeteer-core";
import { launchBrowser, recordPageErrors } from "../e2e/browser";
import { eventsOf, type SseReader } from "../realtime/sse-client";
import { startCloudFixture, type CloudFixture } from "./fixture";

// An enabled local project as a user gets it: Metro serves the preview, and the backend dev server
// is the real `npx convex dev`, pushing to the emulated deployment. One enable, one Metro and one
// CLI serve every test; each leaves convex/ as it found it.
let fx: CloudFixture;
let project: Project;
let sandbox: Sandbox;
let deploymentUrl: string;

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  messages: defineTable({ body: v.string() }),
});
`;

const MESSAGES = `import { v } from "convex/values";
import { mutation, query } from "./_generated/server";

export const list = query({ args: {}, handler: async (ctx) => ctx.db.query("messages").collect() });

export const send = mutation({ args: { body: v.string() }, handler: async (ctx, { body }) => ctx.db.insert("messages", { body }) });

export const refuse = mutation({
  args: {},
  handler: async () => {
    throw new Error("refused on purpose");
  },
});
`;

/** The app's screen: a button that sends a message, and the live list. */
const SCREEN = `import { useMutation, useQuery } from "convex/react";
import { Pressable, Text, View } from "react-native";
import { api } from "../convex/_generated/api";

export default function HomeScreen() {
  const messages = useQuery(api.messages.list);
  const send = useMutation(api.messages.send);
  return (
    <View>
      <Pressable testID="send" onPress={() => void send({ body: "Hello from the first tab" })}>
        <Text>Send</Text>
      </Pressable>
      <Text testID="count">{messages === undefined ? "loading" : messages.length + " messages"}</Text>
      {messages?.map((message) => (
        <Text key={message._id} testID="message">
          {message.body}
        </Text>
      ))}
    </View>
  );
}
`;

type Event = { event: string; payload: { message: string; type: string; source: string; projectId: string } };

/** Events of the stream up to and including the first that `isLast` accepts. */
async function eventsUntil(reader: SseReader, isLast: (event: Event) => boolean): Promise<Event[]> {
  const seen: Event[] = [];
  for (;;) {
    const frame = await reader.next();
    if (!frame) throw new Error(`the stream ended after ${JSON.stringify(seen)}`);
    for (const event of eventsOf([frame]) as Event[]) {
      seen.push(event);
      if (isLast(event)) return seen;
    }
  }
}

async function status(): Promise<ApiBackendStatus> {
  const response = await statusRoute(new Request(`http://localhost/api/backend/status?projectId=${project.id}`, { headers: fx.owner.headers }), undefined);
  return response.json();
}

/** Waits until the backend dev server reports the push state (polling the status route). */
async function pushStateBecomes(state: "pushed" | "failed"): Promise<void> {
  await vi.waitFor(async () => expect((await status()).backendPush?.state).toBe(state), { timeout: 180_000, interval: 250 });
}

const write = (file: string, content: string) => sandbox.files.write(`${APP_DIR}/${file}`, content);

beforeAll(async () => {
  fx = await startCloudFixture();
  project = await fx.newProject();
  ({ deploymentUrl } = await enableCloudBackend(project, openProjectSandbox));
  sandbox = await fx.sandboxOf(project);
});
afterAll(async () => {
  await fx.close();
});

describe("the local backend dev server: the real convex dev", () => {
  it("pushes the enabled app's template functions and generates convex/_generated", async () => {
    expect(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).toHaveLength(1);
    await pushStateBecomes("pushed");
    expect(await sandbox.files.read(`${APP_DIR}/convex/_generated/api.d.ts`)).toContain("ApiFromModules");
  });

  it("no process of the machine has the admin key or the user's token on its command line while the backend dev server runs", async () => {
    await pushStateBecomes("pushed");
    const adminKey = (await getBackendCredentials(project.id))!.adminKey;
    const token = new Headers(fx.owner.headers).get("authorization")?.replace(/^Bearer /, "");
    const secrets = [adminKey, adminKey.split("|").pop()!, ...(token ? [token] : [])];
    const commandLines: string[] = [];
    for (const pid of (await fs.readdir("/proc")).filter((entry) => /^\d+$/.test(entry))) {
      // A process that ended between the listing and the read has no command line left.
      const commandLine = await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (commandLine) commandLines.push(commandLine.replaceAll("\0", " "));
    }
    // The scan saw the real CLI itself, so it read the command lines of the sandbox's processes.
    expect(commandLines.some((line) => line.includes("convex dev"))).toBe(true);
    expect(commandLines.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
  });

  it("pushes convex/messages.ts and a schema: the functions answer, the status says pushed, the error stream shows no error", async () => {
    const { reader, close } = await fx.openErrorStream(project);
    await write("convex/schema.ts", SCHEMA);
    await write("convex/messages.ts", MESSAGES);
    const client = new ConvexHttpClient(deploymentUrl);
    // The deployment runs the pushed functions once the push finished.
    await vi.waitFor(async () => expect(await client.query(anyApi.messages.list, {})).toEqual([]), { timeout: 180_000, interval: 500 });
    await pushStateBecomes("pushed");

    // Stopping publishes what the server still buffered; a marker then closes what this test reads.
    await stopBackendDevServer(sandbox);
    await sendErrorNotification(buildErrorNotification({ message: "SENTINEL", projectId: project.id, source: "backend-dev", type: "backend-error" }));
    const events = await eventsUntil(reader, (event) => event.payload.message === "SENTINEL");
    await close();
    expect(events.map((event) => event.payload.message)).toEqual(["SENTINEL"]);

    // Started again through the route, the CLI finds its code on the deployment and pushes again.
    const started = await devStartRoute(
      new Request("http://localhost/api/backend/dev/start", {
        method: "POST",
        headers: { ...fx.owner.headers, "content-type": "application/json" },
        body: JSON.stringify({ projectId: project.id }),
      }),
      undefined,
    );
    expect(await started.json()).toEqual({ success: true });
    expect((await status()).backendPush).toEqual({ state: expect.stringMatching(/^(pushing|pushed)$/), at: expect.any(String) });
    await pushStateBecomes("pushed");
    expect(await client.query(anyApi.messages.list, {})).toEqual([]);
  });

  it("in Chromium, the Expo web preview shows a message sent with useMutation and listed by useQuery; a second tab sees it without a reload", { timeout: 600_000 }, async () => {
    await write("app/index.tsx", SCREEN);
    const previewUrl = await ensureAppDevServer(sandbox);
    const browser = await launchBrowser();
    try {
      // A window each: headless Chromium renders only the front tab of a window, and a click in a tab behind never lands.
      const [sender, watcher] = [await browser.newPage({ type: "window" }), await browser.newPage({ type: "window" })];
      const errors = [...recordPageErrors(sender), ...recordPageErrors(watcher)];
      // A page that stays blank under load had no uncaught error so far: say which loads failed.
      const failedLoads: string[] = [];
      for (const page of [sender, watcher]) {
        page.on("requestfailed", (request) => failedLoads.push(`${request.url().slice(0, 200)}: ${request.failure()?.errorText}`));
        page.on("response", async (response) => {
          if (response.status() < 400) return;
          // Metro answers a failed bundle with 500 and the error (an unresolved module, a file it has not indexed yet).
          const body = await response.text().catch(() => "(no body)");
          failedLoads.push(`${response.url().slice(0, 200)}: ${response.status()} ${body.slice(0, 600)}`);
        });
      }
      /** Waits until `condition(text)` holds in the page; on a timeout, says what the page shows. */
      const waitIn = async (page: Page, condition: (text: string) => boolean, text: string) => {
        try {
          await page.waitForFunction(condition, { timeout: 120_000, polling: 100 }, text);
        } catch (error) {
          const shown = await page.evaluate(() => document.body.innerText).catch(() => "(unreadable)");
          // The page's own load of a failed bundle ends aborted, without Metro's body: ask again for it.
          const bundleUrl = await page.evaluate(() => [...document.scripts].map((script) => script.src).find((src) => src.includes(".bundle"))).catch(() => undefined);
          const bundle = bundleUrl ? await fetch(bundleUrl).then(async (response) => `${response.status} ${(await response.text()).slice(0, 1500)}`, String) : "(no bundle script)";
          throw new Error(`${String(error)}; the page shows ${JSON.stringify(shown)}; page errors: ${JSON.stringify(errors)}; failed loads: ${JSON.stringify(failedLoads)}; the bundle now: ${bundle}`);
        }
      };
      // The load event waits for Metro's bundle, which it builds for the first visitor: minutes on a loaded machine.
      await Promise.all([sender.goto(previewUrl, { timeout: 420_000 }), watcher.goto(previewUrl, { timeout: 420_000 })]);
      // Run in the page: the list's count line, and whether a message is listed.
      const countIs = (text: string) => document.querySelector('[data-testid="count"]')?.textContent === text;
      const lists = (body: string) => [...document.querySelectorAll('[data-testid="message"]')].some((item) => item.textContent === body);
      await waitIn(sender, countIs, "0 messages");
      await waitIn(watcher, countIs, "0 messages");
      await watcher.evaluate(() => Object.assign(window, { loadedBeforeTheSend: true }));

      await sender.click('[data-testid="send"]');
      await waitIn(sender, lists, "Hello from the first tab");
      await waitIn(watcher, lists, "Hello from the first tab");
      // The same document: the update came over the sync WebSocket, not from a reload.
      expect(await watcher.evaluate(() => (window as unknown as { loadedBeforeTheSend?: boolean }).loadedBeforeTheSend)).toBe(true);
      expect(await watcher.evaluate(() => document.querySelector('[data-testid="count"]')?.textContent)).toBe("1 messages");
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("tails the functions' logs: a mutation's uncaught error reaches the project's error channel", async () => {
    const { reader, close } = await fx.openErrorStream(project);
    await expect(new ConvexHttpClient(deploymentUrl).mutation(anyApi.messages.refuse, {})).rejects.toThrow("refused on purpose");
    const [found] = (await eventsUntil(reader, (event) => event.payload.message.includes("messages:refuse"))).slice(-1);
    await close();
    expect(found.payload).toMatchObject({ projectId: project.id, source: "backend-dev", type: "backend-error" });
    expect(found.payload.message).toMatch(/\[CONVEX M\(messages:refuse\)\] .*Uncaught Error: refused on purpose/);
  });

  it("reports a TypeScript error in convex/ on the project's SSE stream once, naming the file and line; the push waits for the fix", async () => {
    const { reader, close } = await fx.openErrorStream(project);
    await write("convex/count.ts", 'import { query } from "./_generated/server";\n\nexport const count = query({ args: {}, handler: async () => { const total: number = "many"; return total; } });\n');
    // The CLI announces the failed typecheck, then prints tsc's errors seconds later: one notification.
    const untilDetails = await eventsUntil(reader, (event) => event.payload.message.includes("convex/count.ts"));
    expect(untilDetails).toHaveLength(1);
    const [found] = untilDetails;
    expect(found.event).toBe("error-notification");
    expect(found.payload).toMatchObject({ projectId: project.id, source: "backend-dev", type: "build-error" });
    expect(found.payload.message).toMatch(/^✖ TypeScript typecheck via `tsc` failed\.\nconvex\/count\.ts:3:\d+ - error TS2322: Type 'string' is not assignable to type 'number'\./);
    await pushStateBecomes("failed");

    await sandbox.files.remove(`${APP_DIR}/convex/count.ts`);
    const untilResolved = await eventsUntil(reader, (event) => event.payload.type === "resolved");
    await close();
    expect(untilResolved).toHaveLength(1);
    expect(untilResolved[0].payload.message).toMatch(/^✔ .*Convex functions ready!/);
    await pushStateBecomes("pushed");
  });

  it("a push with a broken module gives the CLI's error output on the project's error channel", async () => {
    const { reader, close } = await fx.openErrorStream(project);
    await write("convex/broken.ts", 'export const x = 1;\nthrow new Error("broken at import");\n');
    const [found] = (await eventsUntil(reader, (event) => event.payload.message.includes("broken.js"))).slice(-1);
    expect(found.payload).toMatchObject({ projectId: project.id, source: "backend-dev", type: "backend-error" });
    expect(found.payload.message).toContain(`✖ Error: Unable to start push to ${deploymentUrl}`);
    expect(found.payload.message).toContain("400 Bad Request: InvalidModules:");
    expect(found.payload.message).toContain("Failed to analyze broken.js: Uncaught Error: broken at import");
    expect(found.payload.message).not.toContain((await getBackendCredentials(project.id))!.adminKey);
    await pushStateBecomes("failed");
    // The live code stays: the functions still answer.
    expect(await new ConvexHttpClient(deploymentUrl).query(anyApi.messages.list, {})).toEqual(expect.any(Array));

    await sandbox.files.remove(`${APP_DIR}/convex/broken.ts`);
    await eventsUntil(reader, (event) => event.payload.type === "resolved");
    await close();
    await pushStateBecomes("pushed");
  });
});
