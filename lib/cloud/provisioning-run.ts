import crypto from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { CreateProjectResponse, ProvisionedBackendProject, ProvisionWorkflowOptions } from "@/lib/backend";
import { getConfig } from "@/lib/config";
import { isAppError, isErrorOf } from "@/lib/errors";
import { currentInstance } from "@/lib/instance";
import { log, redactSecrets } from "@/lib/log";
import { getSecretBox } from "@/lib/secrets";
import type { Sql } from "@/lib/store";
import { upsertCredentials } from "@/lib/store/credentials";
import {
  finishOperation,
  getLatestOperation,
  getRunningOperation,
  insertRunningOperation,
  recordSteps,
  takeOverAbandonedOperation,
  type EnableOperation,
  type LeaseHolder,
  type OperationKind,
} from "@/lib/store/operations";
import { getProject, lockProjectRow, setBackendProject, type BackendProjectState } from "@/lib/store/projects";
import { LeaseLostError, ProvisioningFailedError, ProvisioningInProgressError } from "./errors";

export type ConnectedState = Extract<BackendProjectState, { kind: "connected" }>;

/** The journal of one run (`enable_operations.steps`); never holds a plain secret. */
export interface ProvisioningSteps {
  /** The backend project exists (recorded before anything else, so no retry creates another). */
  created?: Omit<CreateProjectResponse, "adminKey">;
  provisioned?: {
    deploymentName: string;
    deploymentUrl: string;
    projectSlug: string;
    teamSlug: string;
    backendProjectId: number;
    /** Ciphertext of the deployment-scoped admin key, bound to the operation id. */
    adminKey: string;
    warningMessage?: string;
  };
  credentialsStored?: true;
  sandboxReady?: { warnings: string[] };
}

type Step = keyof ProvisioningSteps;
type Provisioned = NonNullable<ProvisioningSteps["provisioned"]>;

/**
 * Where an observer sees a run: `claimed` (it holds the lease, nothing else done), `done:<step>`
 * (the step's effect happened, e.g. the upstream create answered, but is not journaled yet),
 * `<step>` (journaled) and `finished` (the project is connected).
 */
export type RunPoint = "claimed" | `done:${Step}` | Step | "finished";

/** What a provisioning path (enable, managed connect, OAuth callback) plugs into the runner. */
export interface ProvisioningPlan {
  projectId: string;
  userId: string;
  kind: OperationKind;
  mode: "managed" | "oauth";
  /** Stored encrypted with the credentials (OAuth mode). */
  accessToken?: string | null;
  /** Creates (or, given `resumeFrom`, finishes) the backend project. */
  provision(options: Pick<ProvisionWorkflowOptions, "onProjectCreated" | "resumeFrom">): Promise<ProvisionedBackendProject>;
  /** Sandbox work that needs no credentials (file injection); runs concurrently with provisioning. */
  prepareSandbox?: () => Promise<string[]>;
  /** Sandbox work that needs the provisioned backend (env file, commit, dev servers). */
  finishSandbox?: (backend: { deploymentUrl: string; adminKey: string }) => Promise<string[]>;
}

export interface RunnerOptions {
  /**
   * How long a run of a live instance may go without journaling a step before another may take
   * over (a dead instance's runs are taken over at once). @default PROVISIONING_LEASE_MS
   */
  leaseMs?: number;
  /** How long a concurrent request waits for a running run before answering 409. @default PROVISIONING_WAIT_MS */
  waitMs?: number;
  /** Polling interval while waiting. @default 100 */
  pollMs?: number;
  /** Observer called at each {@link RunPoint} (tests interrupt or kill runs here). */
  onStep?: (point: RunPoint) => Promise<void>;
}

type Claim =
  | { outcome: "connected"; state: ConnectedState }
  | { outcome: "owner"; operation: EnableOperation<ProvisioningSteps> }
  | { outcome: "busy"; operationId: string };

/**
 * Decides, under the project's row lock, whether this request runs the provisioning, resumes an
 * abandoned run (its owner's process died or restarted, or its lease ran out), waits for a live
 * run, or has nothing to do. A new run inherits the
 * backend project of a previous failed run, so retrying never creates a second one.
 */
async function claim(db: Sql, plan: ProvisioningPlan, holder: LeaseHolder): Promise<Claim> {
  return db.transaction(async (tx) => {
    const state = (await lockProjectRow(tx, plan.projectId))?.backendProject;
    if (state?.kind === "connected") return { outcome: "connected", state };
    const running = await getRunningOperation<ProvisioningSteps>(tx, plan.projectId);
    if (running) {
      const resumed = await takeOverAbandonedOperation<ProvisioningSteps>(tx, running.id, holder);
      return resumed ? { outcome: "owner", operation: resumed } : { outcome: "busy", operationId: running.id };
    }
    const previous = await getLatestOperation<ProvisioningSteps>(tx, plan.projectId);
    // Only a run of the same mode may hand over its backend project (a managed project must
    // never be stored as the user's own, nor the reverse).
    const inherited: ProvisioningSteps =
      previous?.status === "failed" && modeOf(previous.kind) === plan.mode
        ? { created: previous.steps.created, provisioned: previous.steps.provisioned }
        : {};
    if (inherited.provisioned) inherited.provisioned = reencrypt(inherited.provisioned, previous!.id, null);
    const operation = await insertRunningOperation(tx, { ...holder, projectId: plan.projectId, kind: plan.kind, steps: inherited });
    if (inherited.provisioned) {
      inherited.provisioned = reencrypt(inherited.provisioned, null, operation.id);
      await recordSteps(tx, operation.id, holder.leaseOwner, holder.leaseMs, { provisioned: inherited.provisioned });
    }
    await setBackendProject(tx, plan.projectId, { kind: "connecting" });
    return { outcome: "owner", operation: { ...operation, steps: inherited } };
  });
}

const modeOf = (kind: OperationKind): ProvisioningPlan["mode"] => (kind === "oauth" ? "oauth" : "managed");

const journalContext = (operationId: string | null) => `enable_operations.steps:${operationId ?? "transfer"}`;

/** Moves the journaled admin key ciphertext from one operation's context to another's. */
function reencrypt(provisioned: Provisioned, from: string | null, to: string | null): Provisioned {
  const box = getSecretBox();
  return { ...provisioned, adminKey: box.encrypt(box.decrypt(provisioned.adminKey, journalContext(from)), journalContext(to)) };
}

/** A safe, human message for the `failed` state and the HTTP answer. */
function failureOf(error: unknown): { code: string; message: string } {
  if (isAppError(error)) return { code: error.code, message: redactSecrets(error.message) };
  return { code: "provisioning_failed", message: `Setting up the backend failed: ${redactSecrets(String((error as Error)?.message ?? error))}` };
}

async function execute(
  db: Sql,
  plan: ProvisioningPlan,
  operation: EnableOperation<ProvisioningSteps>,
  holder: LeaseHolder,
  options: RunnerOptions,
): Promise<ConnectedState> {
  const box = getSecretBox();
  const context = journalContext(operation.id);
  const steps: ProvisioningSteps = { ...operation.steps };
  const observe = async (point: RunPoint) => options.onStep?.(point);
  const record = async <S extends Step>(step: S, value: ProvisioningSteps[S]) => {
    await observe(`done:${step}`);
    if (!(await recordSteps(db, operation.id, holder.leaseOwner, holder.leaseMs, { [step]: value }))) {
      throw new LeaseLostError();
    }
    steps[step] = value;
    await observe(step);
  };
  await observe("claimed");

  // Injection needs no credentials: start it now, collect it after provisioning.
  const preparing = !steps.sandboxReady && plan.prepareSandbox ? plan.prepareSandbox() : Promise.resolve([]);
  preparing.catch(() => undefined);

  if (!steps.provisioned) {
    // Transient failures (5xx, 429, network, timeouts) are retried with backoff by lib/backend's
    // workflow, which looks the project up by its deterministic name before any create.
    const backend = await plan.provision({
      resumeFrom: steps.created,
      onProjectCreated: async (created) => {
        const { adminKey: _secret, ...withoutSecret } = created;
        void _secret;
        await record("created", withoutSecret);
      },
    });
    await record("provisioned", {
      deploymentName: backend.deploymentName,
      deploymentUrl: backend.deploymentUrl,
      projectSlug: backend.projectSlug,
      teamSlug: backend.teamSlug,
      backendProjectId: backend.projectId,
      adminKey: box.encrypt(backend.token, context),
    });
  }
  const provisioned = steps.provisioned!;
  const adminKey = box.decrypt(provisioned.adminKey, context);

  if (!steps.credentialsStored) {
    await upsertCredentials(db, {
      projectId: plan.projectId,
      userId: plan.userId,
      mode: plan.mode,
      teamSlug: provisioned.teamSlug,
      projectSlug: provisioned.projectSlug,
      deploymentUrl: provisioned.deploymentUrl,
      deploymentName: provisioned.deploymentName,
      adminKey,
      accessToken: plan.accessToken ?? null,
      backendProjectId: provisioned.backendProjectId,
    });
    await record("credentialsStored", true);
  }

  if (!steps.sandboxReady && plan.finishSandbox) {
    const warnings = [...(await preparing), ...(await plan.finishSandbox({ deploymentUrl: provisioned.deploymentUrl, adminKey }))];
    await record("sandboxReady", { warnings });
  }

  const warningMessage = [provisioned.warningMessage, ...(steps.sandboxReady?.warnings ?? [])].filter(Boolean).join(" ");
  const state: ConnectedState = {
    kind: "connected",
    projectSlug: provisioned.projectSlug,
    teamSlug: provisioned.teamSlug,
    deploymentUrl: provisioned.deploymentUrl,
    deploymentName: provisioned.deploymentName,
    ...(warningMessage && { warningMessage }),
  };
  await db.transaction(async (tx) => {
    if (!(await finishOperation(tx, operation.id, holder.leaseOwner, { status: "succeeded" }))) throw new LeaseLostError();
    await setBackendProject(tx, plan.projectId, state);
  });
  await observe("finished");
  return state;
}

/** Records a run's failure on the journal and the project, unless the lease moved on. */
async function fail(db: Sql, plan: ProvisioningPlan, operationId: string, leaseOwner: string, message: string): Promise<void> {
  await db.transaction(async (tx) => {
    if (await finishOperation(tx, operationId, leaseOwner, { status: "failed", errorMessage: message })) {
      await setBackendProject(tx, plan.projectId, { kind: "failed", errorMessage: message });
    }
  });
}

/** After the awaited run ended: its outcome, or null when the project is back to not connected. */
async function outcomeOf(db: Sql, projectId: string): Promise<ConnectedState | null> {
  const state = (await getProject(db, projectId))?.backendProject;
  if (state?.kind === "connected") return state;
  if (state?.kind === "failed") throw new ProvisioningFailedError(state.errorMessage);
  return null;
}

/**
 * Runs a provisioning path exactly once per project, across concurrent requests and app
 * instances (DESIGN.md "Backend state transitions"): `connecting` first, then `connected` or
 * `failed{errorMessage}`. A connected project answers its stored state and does nothing else.
 */
export async function runProvisioning(db: Sql, plan: ProvisioningPlan, options: RunnerOptions = {}): Promise<ConnectedState> {
  const config = getConfig();
  const settings = { leaseMs: config.PROVISIONING_LEASE_MS, waitMs: config.PROVISIONING_WAIT_MS, pollMs: 100, ...options };
  const holder: LeaseHolder = {
    leaseOwner: `${process.pid}:${crypto.randomUUID()}`,
    instance: await currentInstance(db),
    leaseMs: settings.leaseMs,
  };
  const deadline = Date.now() + settings.waitMs;

  for (;;) {
    const claimed = await claim(db, plan, holder);
    if (claimed.outcome === "connected") return claimed.state;
    if (claimed.outcome === "owner") {
      try {
        return await execute(db, plan, claimed.operation, holder, settings);
      } catch (error) {
        if (isErrorOf(error, LeaseLostError)) throw new ProvisioningInProgressError();
        const failure = failureOf(error);
        log.warn("backend provisioning failed", { projectId: plan.projectId, code: failure.code, message: failure.message });
        await fail(db, plan, claimed.operation.id, holder.leaseOwner, failure.message);
        throw new ProvisioningFailedError(failure.message, failure.code, { cause: error });
      }
    }
    // Another run is live: wait for it to end, or to be abandoned (then claim it).
    for (;;) {
      const running = await getRunningOperation(db, plan.projectId);
      if (running?.id !== claimed.operationId || running.abandoned) break;
      if (Date.now() > deadline) throw new ProvisioningInProgressError();
      await delay(settings.pollMs);
    }
    const outcome = await outcomeOf(db, plan.projectId);
    if (outcome) return outcome;
  }
}
