import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ConvexClient, ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { ConvexError } from "convex/values";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import WebSocket from "ws";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { provisionManagedProject, setEnvVariables, type ProvisionedBackendProject } from "@/lib/backend";
import { API_BODY_LIMIT_BYTES } from "@/lib/emulator/http";
import { findPush, listDocuments, listPushModules } from "@/lib/emulator/store";
import { getStore } from "@/lib/store";
import { startTestEmulator, type TestEmulator } from "../backend/emulator-fixture";
import { launchBrowser, recordPageErrors } from "../e2e/browser";
import { fetchOnNewConnection } from "./helpers";

const CONVEX_BIN = path.resolve("node_modules/.bin/convex");
/** Short enough for the endless query's test, long enough for a loaded machine. */
const FUNCTION_TIMEOUT_MS = { query: 10_000, mutation: 10_000, action: 30_000 };
/** The same for loading a push's modules. */
const ANALYSE_TIMEOUT_MS = 15_000;
const EMULATOR_OPTIONS = { functionTimeoutMs: FUNCTION_TIMEOUT_MS, analyseTimeoutMs: ANALYSE_TIMEOUT_MS };

const SCHEMA = `import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  messages: defineTable({ author: v.string(), body: v.string() }).index("by_author", ["author"]),
  ticks: defineTable({ count: v.number() }),
});
`;

/** An action in the Node.js runtime ("use node"), with a Node built-in. */
const NODE_ACTIONS = `"use node";
import { createHash } from "node:crypto";
import { v } from "convex/values";
import { action } from "./_generated/server";

export const digest = action({ args: { text: v.string() }, handler: async (_ctx, { text }) => createHash("sha256").update(text).digest("hex") });
`;

/** A cron job that counts its runs. */
const CRONS = `import { anyApi, cronJobs } from "convex/server";

const crons = cronJobs();
crons.interval("tick", { seconds: 1 }, anyApi.ticks.tick, {});
export default crons;
`;

const TICKS = `import { internalMutation, query } from "./_generated/server";

export const tick = internalMutation({
  args: {},
  handler: async (ctx) => {
    const current = await ctx.db.query("ticks").first();
    if (current) await ctx.db.patch(current._id, { count: current.count + 1 });
    else await ctx.db.insert("ticks", { count: 1 });
  },
});

export const count = query({ args: {}, handler: async (ctx) => (await ctx.db.query("ticks").first())?.count ?? 0 });
`;

const MESSAGES = `import { anyApi } from "convex/server";
import { ConvexError, v } from "convex/values";
import { action, internalMutation, mutation, query } from "./_generated/server";

export const list = query({
  args: {},
  handler: async (ctx) => ctx.db.query("messages").collect(),
});

export const send = mutation({
  args: { author: v.string(), body: v.string() },
  handler: async (ctx, args) => ctx.db.insert("messages", args),
});

export const clear = internalMutation({
  args: {},
  handler: async (ctx) => {
    console.log("clearing", { table: "messages" });
    for (const message of await ctx.db.query("messages").collect()) await ctx.db.delete(message._id);
  },
});

export const byAuthor = query({
  args: { author: v.string() },
  handler: async (ctx, { author }) => ctx.db.query("messages").withIndex("by_author", (q) => q.eq("author", author)).order("desc").collect(),
});

export const sendLater = mutation({
  args: { author: v.string(), body: v.string(), delayMs: v.number() },
  handler: async (ctx, { delayMs, ...message }) => {
    await ctx.scheduler.runAfter(delayMs, anyApi.messages.send, message);
  },
});

export const sendUnchecked = mutation({
  args: { document: v.any() },
  handler: async (ctx, { document }) => ctx.db.insert("messages", document),
});

export const refuse = mutation({
  args: {},
  handler: async () => {
    throw new ConvexError({ reason: "closed", retryAfter: 5 });
  },
});

export const shout = action({
  args: { author: v.string(), body: v.string() },
  handler: async (ctx, args) => {
    const id = await ctx.runMutation(anyApi.messages.send, { ...args, body: args.body.toUpperCase() });
    return { id, count: (await ctx.runQuery(anyApi.messages.list, {})).length };
  },
});

export const whoami = query({
  args: {},
  handler: async (ctx) => ctx.auth.getUserIdentity(),
});

export const spin = query({
  args: {},
  handler: async () => {
    for (;;) {}
  },
});
`;

const HTTP = `import { anyApi, httpRouter } from "convex/server";
import { httpAction } from "./_generated/server";

const http = httpRouter();
http.route({
  path: "/messages",
  method: "GET",
  handler: httpAction(async (ctx, request) => {
    const messages = await ctx.runQuery(anyApi.messages.list, {});
    return Response.json({ count: messages.length, q: new URL(request.url).searchParams.get("q") });
  }),
});
http.route({
  path: "/messages",
  method: "POST",
  handler: httpAction(async (ctx, request) => {
    const { author, body } = await request.json();
    return new Response(await ctx.runMutation(anyApi.messages.send, { author, body }), { status: 201 });
  }),
});
// What Convex Auth serves on the site URL: the discovery document and the public keys of JWKS.
http.route({
  path: "/.well-known/openid-configuration",
  method: "GET",
  handler: httpAction(async () =>
    Response.json({ issuer: process.env.CONVEX_SITE_URL, jwks_uri: process.env.CONVEX_SITE_URL + "/.well-known/jwks.json" }),
  ),
});
http.route({
  path: "/.well-known/jwks.json",
  method: "GET",
  handler: httpAction(async () => new Response(process.env.JWKS, { headers: { "content-type": "application/json" } })),
});
export default http;
`;

/** Convex Auth's provider: the deployment's own site URL is the issuer. */
const AUTH_CONFIG = `export default { providers: [{ domain: process.env.CONVEX_SITE_URL, applicationID: "convex" }] };
`;

/**
 * The real `convex` CLI (1.48) pushes to an emulated deployment: `convex dev --once` with
 * CONVEX_SELF_HOSTED_URL and CONVEX_SELF_HOSTED_ADMIN_KEY in its environment calls get_config_hashes, deploy2/start_push, wait_for_schema,
 * finish_push and report_push_completed, and ends in success; broken code fails the push with the
 * CLI's own error output.
 */
describe("convex dev pushes to the emulated deployment", () => {
  let emulator: TestEmulator;
  let project: ProvisionedBackendProject;
  let cwd: string;
  let signingKeys: Awaited<ReturnType<typeof generateKeyPair>>;

  /** A token as Convex Auth signs it: issued by the site URL for the "convex" audience. */
  const signToken = (key = signingKeys.privateKey) =>
    new SignJWT({ name: "Ada Lovelace", email: "ada@example.com" })
      .setProtectedHeader({ alg: "RS256" })
      .setIssuer(project.deploymentUrl)
      .setSubject("user-1")
      .setAudience("convex")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(key);

  beforeAll(async () => {
    emulator = await startTestEmulator(EMULATOR_OPTIONS);
    project = await provisionManagedProject({ ...emulator.team, projectName: "push app" }, emulator.management);
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "convex-push-"));
    fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "push-app", private: true, dependencies: { convex: "1.48.0" } }));
    // The CLI bundles with the project's own convex package and esbuild.
    fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
    fs.mkdirSync(path.join(cwd, "convex"));
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    fs.writeFileSync(path.join(cwd, "convex", "messages.ts"), MESSAGES);
    fs.writeFileSync(path.join(cwd, "convex", "http.ts"), HTTP);
    fs.writeFileSync(path.join(cwd, "convex", "crons.ts"), CRONS);
    fs.writeFileSync(path.join(cwd, "convex", "ticks.ts"), TICKS);
    fs.writeFileSync(path.join(cwd, "convex", "nodeActions.ts"), NODE_ACTIONS);
    fs.writeFileSync(path.join(cwd, "convex", "auth.config.ts"), AUTH_CONFIG);
    signingKeys = await generateKeyPair("RS256");
    await setEnvVariables(project, { JWKS: JSON.stringify({ keys: [{ ...(await exportJWK(signingKeys.publicKey)), use: "sig", alg: "RS256" }] }) });
  });
  afterAll(async () => {
    await emulator.server.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  /** The deployment as the CLI reads it from its environment (never on a command line, where `ps` shows it). */
  const selfHosted = () => ({ CONVEX_SELF_HOSTED_URL: project.deploymentUrl, CONVEX_SELF_HOSTED_ADMIN_KEY: project.token });

  /** `convex dev --once` (or `deploy --yes`) without the typecheck (tsc costs seconds and is not what is tested here); exit code and both streams. */
  async function push(command: string[] = ["dev", "--once"]): Promise<{ code: number; output: string }> {
    const result = await promisify(execFile)(CONVEX_BIN, [...command, "--typecheck", "disable"], {
      cwd,
      env: { ...process.env, ...selfHosted(), CI: "1", CONVEX_PROVISION_HOST: emulator.server.baseUrl, NO_COLOR: "1" },
      timeout: 120_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    return result;
  }

  const deploymentName = () => project.deploymentName;

  /** Runs `convex logs --history 100` until its output matches, then stops it; the output. */
  function convexLogs(until: RegExp): Promise<string> {
    const child = spawn(CONVEX_BIN, ["logs", "--history", "100"], {
      cwd,
      env: { ...process.env, ...selfHosted(), CI: "1", NO_COLOR: "1" },
    });
    // It streams until stopped: a test that fails before the match must not leave it running.
    onTestFinished(() => void child.kill());
    let output = "";
    return new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (until.test(output)) {
          child.kill();
          resolve(output);
        }
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      child.on("exit", () => reject(new Error(`convex logs exited without printing ${until}:\n${output}`)));
    });
  }

  /** The server restarts: a new emulator on the same store reopens the deployment's port. */
  async function restartServer(): Promise<void> {
    await emulator.server.close();
    emulator = await startTestEmulator(EMULATOR_OPTIONS);
    await emulator.server.emulator.start();
  }

  it("pushes a schema and a module of functions: success, codegen, and the analysis is stored", { timeout: 180_000 }, async () => {
    const { code, output } = await push();
    expect(output).toContain("Convex functions ready!");
    expect(code).toBe(0);
    expect(output).toContain("[+] messages.by_author");
    expect(fs.existsSync(path.join(cwd, "convex", "_generated", "api.d.ts"))).toBe(true);

    const live = await findPush(await getStore(), deploymentName());
    expect(live?.config.functions).toBe("convex/");
    expect(live?.analysis["messages.js"]).toEqual({
      functions: [
        { name: "byAuthor", pos: null, udfType: "Query", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "clear", pos: null, udfType: "Mutation", visibility: { kind: "internal" }, args: expect.any(String), returns: expect.any(String) },
        { name: "list", pos: null, udfType: "Query", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "refuse", pos: null, udfType: "Mutation", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "send", pos: null, udfType: "Mutation", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "sendLater", pos: null, udfType: "Mutation", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "sendUnchecked", pos: null, udfType: "Mutation", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "shout", pos: null, udfType: "Action", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "spin", pos: null, udfType: "Query", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
        { name: "whoami", pos: null, udfType: "Query", visibility: { kind: "public" }, args: expect.any(String), returns: expect.any(String) },
      ],
      httpRoutes: null,
      cronSpecs: null,
      sourceMapped: null,
    });
    expect((live!.analysis["http.js"] as { httpRoutes: unknown }).httpRoutes).toEqual([
      { path: "/.well-known/jwks.json", method: "GET" },
      { path: "/.well-known/openid-configuration", method: "GET" },
      { path: "/messages", method: "GET" },
      { path: "/messages", method: "POST" },
    ]);
    const send = (live!.analysis["messages.js"] as { functions: { name: string; args: string }[] }).functions.find((fn) => fn.name === "send")!;
    expect(JSON.parse(send.args)).toEqual({
      type: "object",
      value: { author: { fieldType: { type: "string" }, optional: false }, body: { fieldType: { type: "string" }, optional: false } },
    });
    expect(live!.auth).toEqual([{ domain: project.deploymentUrl, applicationID: "convex" }]);
    expect((live!.schema as { tables: { tableName: string }[] }).tables.map((table) => table.tableName)).toEqual(["messages", "ticks"]);
    const paths = (await listPushModules(await getStore(), live!.id)).map((module) => module.path);
    expect(paths).toEqual(expect.arrayContaining(["messages.js", "schema.js"]));
  });

  it("a module that throws at import fails the push with the CLI's error output and keeps the live code", { timeout: 180_000 }, async () => {
    const before = await findPush(await getStore(), deploymentName());
    fs.writeFileSync(path.join(cwd, "convex", "broken.ts"), 'export const x = 1;\nthrow new Error("broken at import");\n');
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("Error: Unable to start push to");
      expect(output).toContain("400 Bad Request: InvalidModules:");
      expect(output).toContain("Failed to analyze broken.js: Uncaught Error: broken at import");
      // The frame points at the app's source, through the push's source map.
      expect(output).toMatch(/at .*\.\.\/convex\/broken\.ts:2:\d+/);
    } finally {
      fs.rmSync(path.join(cwd, "convex", "broken.ts"));
    }
    expect((await findPush(await getStore(), deploymentName()))?.id).toBe(before?.id);
    // Only the live push's modules stay on disk.
    expect(fs.readdirSync(path.join(process.env.DATA_DIR!, "emulator", "pushes", deploymentName()))).toEqual([before?.id]);
  });

  it("a module that loops forever at import fails the push at the time limit, naming the module", { timeout: 180_000 }, async () => {
    fs.writeFileSync(path.join(cwd, "convex", "looping.ts"), "export const x = 1;\nfor (;;) {}\n");
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("400 Bad Request: InvalidModules:");
      expect(output).toContain(`Failed to analyze looping.js: The module did not finish loading within ${ANALYSE_TIMEOUT_MS / 1000} s`);
    } finally {
      fs.rmSync(path.join(cwd, "convex", "looping.ts"));
    }
  });

  it("an invalid schema fails the push with the CLI's error output", { timeout: 180_000 }, async () => {
    // Two indexes with one name: defineSchema accepts it, the backend refuses it when evaluating the schema.
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA.replace('.index("by_author", ["author"])', '.index("by_author", ["author"]).index("by_author", ["body"])'));
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("400 Bad Request: InvalidSchema:");
      expect(output).toContain("Hit an error while evaluating your schema:");
    } finally {
      fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    }
  });

  it("ConvexHttpClient runs queries, mutations and actions on the pushed code; the data survives a restart", { timeout: 120_000 }, async () => {
    const client = new ConvexHttpClient(project.deploymentUrl);
    expect(await client.query(anyApi.messages.list, {})).toEqual([]);
    const id = await client.mutation(anyApi.messages.send, { author: "ada", body: "hello" });
    expect(typeof id).toBe("string");
    const shouted = await client.action(anyApi.messages.shout, { author: "bob", body: "hi" });
    expect(shouted).toEqual({ id: expect.any(String), count: 2 });
    await client.mutation(anyApi.messages.send, { author: "ada", body: "again" });
    expect(await client.action(anyApi.nodeActions.digest, { text: "abc" })).toBe(createHash("sha256").update("abc").digest("hex"));
    const byAda = await client.query(anyApi.messages.byAuthor, { author: "ada" });
    expect(byAda.map((message: { body: string }) => message.body)).toEqual(["again", "hello"]);
    expect(byAda[1]).toEqual({ _id: id, _creationTime: expect.any(Number), author: "ada", body: "hello" });

    await restartServer();
    // A client on new connections: the global fetch may still hold sockets the old server closed.
    const fresh = new ConvexHttpClient(project.deploymentUrl, { fetch: fetchOnNewConnection });
    const after = await fresh.query(anyApi.messages.list, {});
    expect(after.map((message: { body: string }) => message.body)).toEqual(["hello", "HI", "again"]);
    // `/api/run/<module>/<export>` names the function by its URL; browsers may call it from another origin.
    const run = await fetch(new URL("/api/run/messages/list", project.deploymentUrl), { method: "POST", headers: { "content-type": "application/json", connection: "close" }, body: JSON.stringify({ args: {} }) });
    expect(run.headers.get("access-control-allow-origin")).toBe("*");
    expect((await run.json()).value).toHaveLength(3);
    const preflight = await fetch(new URL("/api/mutation", project.deploymentUrl), { method: "OPTIONS", headers: { origin: "http://localhost:8081", "access-control-request-method": "POST", connection: "close" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type");
    // Ids handed out after the restart do not collide with stored ones.
    const next = await fresh.mutation(anyApi.messages.send, { author: "cy", body: "new" });
    expect(after.map((message: { _id: string }) => message._id)).not.toContain(next);
  });

  it("refuses bad arguments, schema violations, ConvexErrors and internal functions with the real error shapes", { timeout: 120_000 }, async () => {
    const client = new ConvexHttpClient(project.deploymentUrl);
    // convex-test's wording of a validator mismatch.
    await expect(client.mutation(anyApi.messages.send, { author: 1, body: "x" })).rejects.toThrow("Validator error: Expected `string`, got `1`");
    await expect(client.mutation(anyApi.messages.sendUnchecked, { document: { author: "ada" } })).rejects.toThrow(/body/);
    const refused = await client.mutation(anyApi.messages.refuse, {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConvexError);
    expect((refused as ConvexError<{ reason: string }>).data).toEqual({ reason: "closed", retryAfter: 5 });
    await expect(client.mutation(anyApi.messages.clear, {})).rejects.toThrow("Could not find public function for 'messages:clear'");
    await expect(client.query(anyApi.messages.send, {})).rejects.toThrow("Trying to execute messages:send as Query, but it is defined as Mutation.");

    // An admin key (as the CLI's `convex run` sends it) may run internal functions.
    const cleared = await fetch(new URL("/api/mutation", project.deploymentUrl), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Convex ${project.token}` },
      body: JSON.stringify({ path: "messages:clear", args: [{}], format: "convex_encoded_json" }),
    });
    // What the function printed comes back as its log lines.
    expect(await cleared.json()).toEqual({ status: "success", value: null, logLines: ["[LOG] 'clearing' { table: 'messages' }"] });
    expect(await client.query(anyApi.messages.list, {})).toEqual([]);

    // The CLI's log stream shows the call and what it printed.
    const logs = await convexLogs(/\[CONVEX M\(messages:clear\)\] \[LOG\] 'clearing' \{ table: 'messages' \}/);
    expect(logs).toMatch(/\[CONVEX M\(messages:refuse\)\] .*closed/);

    // A deployment refuses a public API body over Convex's request limit before any function runs.
    const oversized = "x".repeat(API_BODY_LIMIT_BYTES);
    await expect(client.mutation(anyApi.messages.send, { author: "big", body: oversized })).rejects.toThrow(`The request body is larger than ${API_BODY_LIMIT_BYTES} bytes.`);
  });

  it("a sync client of an unknown protocol version gets a FatalError and the socket closes", { timeout: 60_000 }, async () => {
    const socket = new WebSocket(`${project.deploymentUrl.replace("http", "ws")}/api/9.0.0/sync`);
    const messages: unknown[] = [];
    socket.on("message", (data) => messages.push(JSON.parse(String(data))));
    const code = await new Promise((resolve) => socket.on("close", resolve));
    expect(code).toBe(1002);
    expect(messages).toEqual([{ type: "FatalError", error: expect.stringContaining("client version 9.0.0 is unknown") }]);
  });

  it("a query that never returns is stopped at the time limit; the deployment keeps answering", { timeout: 120_000 }, async () => {
    const client = new ConvexHttpClient(project.deploymentUrl);
    await expect(client.query(anyApi.messages.spin, {})).rejects.toThrow("Function execution timed out");
    expect(await client.query(anyApi.messages.list, {})).toEqual([]);
  });

  it("ConvexClient over the sync WebSocket: a subscription sees another client's mutation without asking again", { timeout: 120_000 }, async () => {
    const options = { webSocketConstructor: WebSocket as unknown as typeof globalThis.WebSocket, unsavedChangesWarning: false };
    const writer = new ConvexClient(project.deploymentUrl, options);
    const reader = new ConvexClient(project.deploymentUrl, options);
    try {
      const seen: string[][] = [];
      let notify: () => void = () => undefined;
      const unsubscribe = reader.onUpdate(anyApi.messages.list, {}, (messages: { body: string }[]) => {
        seen.push(messages.map((message) => message.body));
        notify();
      });
      const until = (predicate: () => boolean) =>
        new Promise<void>((resolve) => {
          notify = () => predicate() && resolve();
          notify();
        });
      await until(() => seen.length > 0);
      const before = seen.at(-1)!;

      await writer.mutation(anyApi.messages.send, { author: "ws", body: "live" });
      // The writer's own query answers with its write once the mutation resolved.
      expect((await writer.query(anyApi.messages.list, {})).map((message: { body: string }) => message.body)).toEqual([...before, "live"]);
      await until(() => seen.at(-1)!.includes("live"));
      expect(seen.at(-1)).toEqual([...before, "live"]);

      // A scheduled function's writes reach subscribers too.
      await writer.mutation(anyApi.messages.sendLater, { author: "ws", body: "scheduled", delayMs: 0 });
      await until(() => seen.at(-1)!.includes("scheduled"));

      expect(await writer.action(anyApi.messages.shout, { author: "ws", body: "loud" })).toEqual({ id: expect.any(String), count: before.length + 3 });
      await until(() => seen.at(-1)!.includes("LOUD"));

      const refused = await writer.mutation(anyApi.messages.refuse, {}).catch((error: unknown) => error);
      expect((refused as ConvexError<{ reason: string }>).data).toEqual({ reason: "closed", retryAfter: 5 });
      unsubscribe();
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it("serves the HTTP actions of convex/http.ts at the deployment's URL", { timeout: 120_000 }, async () => {
    const posted = await fetch(new URL("/messages", project.deploymentUrl), { method: "POST", body: JSON.stringify({ author: "http", body: "via route" }) });
    expect(posted.status).toBe(201);
    const id = await posted.text();
    const messages = await new ConvexHttpClient(project.deploymentUrl).query(anyApi.messages.list, {});
    expect(messages.find((message: { _id: string }) => message._id === id)).toMatchObject({ author: "http", body: "via route" });
    const listed = await fetch(new URL("/messages?q=x", project.deploymentUrl));
    expect(await listed.json()).toEqual({ count: messages.length, q: "x" });
    expect((await fetch(new URL("/nowhere", project.deploymentUrl))).status).toBe(404);
  });

  it("a schema that stored documents violate fails the push at wait_for_schema, as the CLI reports it", { timeout: 180_000 }, async () => {
    const before = await findPush(await getStore(), deploymentName());
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA.replace("body: v.string() }", "body: v.string(), likes: v.number() }"));
    try {
      const { code, output } = await push();
      expect(code).not.toBe(0);
      expect(output).toContain("Schema validation failed.");
      expect(output).toMatch(/Document with ID "\w+" in table "messages" does not match the schema/);
    } finally {
      fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    }
    expect((await findPush(await getStore(), deploymentName()))?.id).toBe(before?.id);
  });

  it("honours the pushed auth providers: a Convex Auth token gives the identity over HTTP and the sync WebSocket; a forged one is refused", { timeout: 120_000 }, async () => {
    const token = await signToken();
    const expected = { tokenIdentifier: `${project.deploymentUrl}|user-1`, subject: "user-1", issuer: project.deploymentUrl, name: "Ada Lovelace", email: "ada@example.com" };
    const http = new ConvexHttpClient(project.deploymentUrl);
    expect(await http.query(anyApi.messages.whoami, {})).toBeNull();
    http.setAuth(token);
    expect(await http.query(anyApi.messages.whoami, {})).toEqual(expected);

    const forged = new ConvexHttpClient(project.deploymentUrl);
    forged.setAuth(await signToken((await generateKeyPair("RS256")).privateKey));
    await expect(forged.query(anyApi.messages.whoami, {})).rejects.toThrow("Could not verify OIDC token claim");

    const client = new ConvexClient(project.deploymentUrl, { webSocketConstructor: WebSocket as unknown as typeof globalThis.WebSocket, unsavedChangesWarning: false });
    try {
      const identity = new Promise((resolve) => {
        client.setAuth(async () => token);
        client.onUpdate(anyApi.messages.whoami, {}, (value: unknown) => value && resolve(value));
      });
      expect(await identity).toEqual(expected);
    } finally {
      await client.close();
    }
  });

  it("convex deploy pushes too: its schema and push evaluations are answered and the new index is reported", { timeout: 180_000 }, async () => {
    fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA.replace('.index("by_author", ["author"])', '.index("by_author", ["author"]).index("by_body", ["body"])'));
    try {
      const { code, output } = await push(["deploy", "--yes"]);
      expect(output).toContain("No indexes are deleted by this push");
      expect(output).toContain("[+] messages.by_body");
      expect(output).toContain(`Deployed Convex functions to ${project.deploymentUrl}`);
      expect(code).toBe(0);
    } finally {
      fs.writeFileSync(path.join(cwd, "convex", "schema.ts"), SCHEMA);
    }
    expect(schemaIndexNames((await findPush(await getStore(), deploymentName()))!.schema)).toEqual(["by_author", "by_body"]);
  });

  it("runs the cron jobs of convex/crons.ts", { timeout: 60_000 }, async () => {
    const client = new ConvexHttpClient(project.deploymentUrl, { fetch: fetchOnNewConnection });
    await vi.waitFor(async () => expect(await client.query(anyApi.ticks.count, {})).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 250 });
  });

  it("a scheduled function still pending at a restart runs after it, started with the server", { timeout: 120_000 }, async () => {
    const client = new ConvexHttpClient(project.deploymentUrl, { fetch: fetchOnNewConnection });
    await client.mutation(anyApi.messages.sendLater, { author: "timer", body: "after restart", delayMs: 5_000 });
    const jobs = async () => (await listDocuments(await getStore(), deploymentName())).filter(([id]) => id.endsWith("_scheduled_functions"));
    const pending = (await jobs()).find(([, job]) => (job as { state: { kind: string } }).state.kind === "pending");
    expect(pending).toBeDefined();

    await restartServer();
    // No client calls: the server starts the worker, which schedules the job again; the store shows the write.
    const sent = async () => (await listDocuments(await getStore(), deploymentName())).filter(([, value]) => (value as { body?: string }).body === "after restart");
    await vi.waitFor(async () => expect(await sent()).toHaveLength(1), { timeout: 60_000, interval: 200 });
    // The job ran as a new job; the one the old worker held is gone.
    expect((await jobs()).map(([id]) => id)).not.toContain(pending![0]);
    const fresh = new ConvexHttpClient(project.deploymentUrl, { fetch: fetchOnNewConnection });
    expect((await fresh.query(anyApi.messages.list, {})).filter((message: { body: string }) => message.body === "after restart")).toHaveLength(1);
  });


  it("in Chromium, a page's ConvexClient sends a message and a second tab sees it appear without a reload", { timeout: 120_000 }, async () => {
    // A page of another origin, as the app's web preview is: the browser build of the convex client, subscribed to messages:list.
    const page = `<!doctype html><ul id="messages"></ul><script src="/convex.js"></script><script>
      const client = new convex.ConvexClient(${JSON.stringify(project.deploymentUrl)});
      client.onUpdate("messages:list", {}, (messages) => {
        document.getElementById("messages").replaceChildren(...messages.map((message) => Object.assign(document.createElement("li"), { textContent: message.body })));
      });
      window.send = (body) => client.mutation("messages:send", { author: "tab", body });
    </script>`;
    const site = http.createServer((request, response) => {
      if (request.url === "/convex.js") response.end(fs.readFileSync(path.resolve("node_modules/convex/dist/browser.bundle.js")));
      else response.end(page);
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
    const browser = await launchBrowser();
    try {
      const [sender, watcher] = [await browser.newPage(), await browser.newPage()];
      const errors = [...recordPageErrors(sender), ...recordPageErrors(watcher)];
      for (const page of [sender, watcher]) page.setDefaultTimeout(120_000);
      await Promise.all([sender.goto(siteUrl), watcher.goto(siteUrl)]);
      // Runs in the page: whether the list shows this message.
      const shows = (body: string) => [...document.querySelectorAll("#messages li")].some((item) => item.textContent === body);
      await sender.evaluate(() => (window as unknown as { send(body: string): Promise<unknown> }).send("from the first tab"));
      await sender.waitForFunction(shows, {}, "from the first tab");
      await watcher.waitForFunction(shows, {}, "from the first tab");
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    }
  });
});

function schemaIndexNames(schema: unknown): string[] {
  return (schema as { tables: { indexes: { indexDescriptor: string }[] }[] }).tables[0].indexes.map((index) => index.indexDescriptor);
}
