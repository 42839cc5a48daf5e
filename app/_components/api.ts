import type { ApiJob } from "@/lib/api-contract/types";
import { showToast } from "./toast";

/** An error answer of the service (`{ error: { code, message } }`), or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The `ApiError` an answer's body describes; for bodies that are not the error shape, a generic one. */
export function apiErrorFrom(status: number, body: unknown): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code === "string" && typeof error.message === "string") return new ApiError(status, error.code, error.message);
  return new ApiError(status, "http_error", `The server answered ${status}.`);
}

/**
 * Calls the service's JSON API with the session cookie (same origin). `json` is sent as the
 * body. Resolves with the parsed answer; rejects with an {@link ApiError} carrying the server's
 * message, which is written for humans and shown as is.
 */
export async function callApi<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: init.json === undefined ? undefined : { "content-type": "application/json" },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "network_error", "The server could not be reached.");
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw apiErrorFrom(response.status, body);
  return body as T;
}

/** {@link callApi}, and a failure also shows as a toast, wherever the page is scrolled. */
export async function callApiOrToast<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  try {
    return await callApi<T>(path, init);
  } catch (failure) {
    showToast(messageOf(failure), "error");
    throw failure;
  }
}

const JOB_POLL_MS = 1_000;

/**
 * Calls a route that queues a background job (202 with the job) and follows the job through
 * its status route until it is done: resolves with its result, rejects with an
 * {@link ApiError} carrying the job's error. A failure also shows as a toast.
 */
export async function callJobOrToast<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  try {
    let job = await callApi<ApiJob>(path, { method: "POST", ...init });
    const status = `/api/projects/${encodeURIComponent(job.projectId ?? "")}/jobs/${encodeURIComponent(job.id)}`;
    while (job.state === "queued" || job.state === "running") {
      await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
      job = await callApi<ApiJob>(status);
    }
    if (job.state === "failed") throw new ApiError(200, job.error?.code ?? "job_failed", job.error?.message ?? "The job failed.");
    return job.result as T;
  } catch (failure) {
    showToast(messageOf(failure), "error");
    throw failure;
  }
}

/** A message to show for anything a call rejected with. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
