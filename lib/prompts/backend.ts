import { BACKEND_CONFIG_FILE, BACKEND_URL_VARIABLE, FUNCTIONS_DIR } from "@/lib/app-names";

/**
 * Guidelines for writing the app against its cloud backend (a Convex deployment whose functions
 * live in convex/). Added to the prompt only when the project's backend is connected.
 */
export const BACKEND_SECTIONS = {
  overview: `# Cloud backend
This project has a connected Convex backend. Server code lives in ${FUNCTIONS_DIR}/ (configured by ${BACKEND_CONFIG_FILE}) and is
deployed automatically by the backend dev server while you edit. The app reaches it through the client created
in app/_layout.tsx from process.env.${BACKEND_URL_VARIABLE} (BackendWrapper); do not remove that wrapper, read the
variable any other way (Expo inlines only the exact \`process.env.${BACKEND_URL_VARIABLE}\` form) or hard-code the URL.`,

  functions: `## Function syntax
- Queries read data, mutations write data, actions call third-party services. Import builders from "./_generated/server":
  export const list = query({ args: { channel: v.id("channels") }, returns: v.array(v.any()), handler: async (ctx, args) => { ... } });
- Always declare args (and returns) with validators. A function file's exports are its public API: convex/messages.ts
  exporting "send" is called as api.messages.send from the app.
- Use internalQuery / internalMutation / internalAction for functions only the backend itself may call (internal.*).
- Actions cannot touch the database directly: call ctx.runQuery / ctx.runMutation with api.* or internal.* references.`,

  schema: `## Schema definition
- Describe tables in convex/schema.ts: export default defineSchema({ messages: defineTable({ body: v.string(), author: v.id("users") }).index("by_author", ["author"]) }).
- Every document gets _id and _creationTime automatically; never declare them.
- Add an index for every field you filter on and query with .withIndex("by_author", (q) => q.eq("author", id)); avoid .filter on large tables.`,

  validators: `## Validators
- Import v from "convex/values": v.string(), v.number(), v.boolean(), v.id("table"), v.array(...), v.object({...}),
  v.optional(...), v.union(...), v.literal("x"), v.null(), v.int64(), v.bytes(), v.record(keys, values).
- Validate every argument of every public function; return v.null() from functions that return nothing.`,

  clientHooks: `## Client hooks (React Native)
- import { useQuery, useMutation, useAction } from "convex/react" and import { api } from "../convex/_generated/api" (path relative to the file).
- const messages = useQuery(api.messages.list, { channel }); it is undefined while loading and updates live: render a loading state.
- const send = useMutation(api.messages.send); await send({ body }). Pass "skip" as the args of useQuery to wait for a value.`,

  auth: `## Auth patterns
- Authentication providers go in convex/auth.config.ts. The deployment already has SITE_URL, JWKS and JWT_PRIVATE_KEY set when auth is initialised.
- In functions, const identity = await ctx.auth.getUserIdentity(); if (!identity) throw new Error("Not signed in");
- Check ownership of every document a user reads or changes; never trust a user id sent from the client.`,

  fileStorage: `## File storage
- Upload: a mutation returns await ctx.storage.generateUploadUrl(); the app POSTs the file to that URL and saves the returned storageId (v.id("_storage")).
- Serve: await ctx.storage.getUrl(storageId) in a query; store storage ids in documents, not URLs.`,

  scheduling: `## Scheduling
- Run work later with await ctx.scheduler.runAfter(0, internal.jobs.process, { id }) or runAt(timestamp, ...).
- Recurring jobs go in convex/crons.ts: const crons = cronJobs(); crons.interval("cleanup", { hours: 1 }, internal.jobs.cleanup, {}); export default crons;`,

  bestPractices: `## Best practices
- Keep queries fast and deterministic: no fetch, no Date.now() based filtering of large sets, no Math.random in queries.
- Paginate long lists with .paginate(paginationOpts) and usePaginatedQuery.
- Secrets for actions go in deployment environment variables (process.env.NAME inside convex/), never in app code.
- When the backend dev server reports an error, fix convex/ first: the app cannot call functions that failed to deploy.
- Each error notification names its kind (typecheck, bundle, push, schema, function-runtime, app-bundle, app-runtime) and, where known, file, line, column and codeFrame: fix that place. An error is sent once; it is fixed when a notification of type "resolved" lists its fingerprint in resolves (GET /api/projects/<id>/errors shows resolvedAt on each).`,
} as const;

export const BACKEND_PROMPT = Object.values(BACKEND_SECTIONS).join("\n\n");
