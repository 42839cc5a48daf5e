import { describe, expect, it } from "vitest";
import {
  BackendApiError,
  BackendAuthError,
  BackendNetworkError,
  BackendNotFoundError,
  BackendSsoRequiredError,
  BackendTimeoutError,
  ProjectQuotaReachedError,
} from "@/lib/backend";
import { backendErrorFromResponse, scrubUpstreamText } from "@/lib/backend/errors";
import { AppError } from "@/lib/errors";

const map = (status: number, body: unknown, secrets: string[] = []) =>
  backendErrorFromResponse({ operation: "create project", status, body, secrets });

describe("backendErrorFromResponse", () => {
  it("maps codes before statuses", () => {
    expect(map(400, { code: "ProjectQuotaReached", message: "20/20" })).toBeInstanceOf(ProjectQuotaReachedError);
    expect(map(403, { code: "SSORequired", message: "x" })).toBeInstanceOf(BackendSsoRequiredError);
    expect(map(403, "SSORequired: log in")).toBeInstanceOf(BackendSsoRequiredError);
    expect(map(401, { code: "AccessTokenInvalid", message: "x" })).toBeInstanceOf(BackendAuthError);
    expect(map(403, { code: "BadDeployKey", message: "x" })).toBeInstanceOf(BackendAuthError);
    expect(map(404, { code: "ProjectNotFound", message: "x" })).toBeInstanceOf(BackendNotFoundError);
  });

  it("keeps the quota code and the plan limit in the message, with our own status", () => {
    const error = map(400, { code: "ProjectQuotaReached", message: "Team acme has 20/20 projects" });
    expect(error.message).toBe(
      "Failed to create project: ProjectQuotaReached: the backend team has reached its plan's project limit. " +
        "Delete unused projects or upgrade the plan. (Team acme has 20/20 projects)",
    );
    expect(error).toMatchObject({ name: "ProjectQuotaReachedError", status: 409, code: "project_quota_reached", upstreamStatus: 400 });
    expect(error).toBeInstanceOf(AppError);
  });

  it("reads OAuth and UDF error shapes and plain text", () => {
    expect(map(400, { error: "invalid_grant", error_description: "expired" })).toMatchObject({ upstreamCode: "invalid_grant", message: expect.stringContaining("expired") });
    expect(map(500, { status: "error", errorMessage: "boom" }).message).toContain("boom");
    expect(map(502, "<html>Bad gateway</html>").message).toContain("Bad gateway");
  });

  it("classifies retryable failures: 5xx, 429, timeouts and network errors only", () => {
    expect(map(503, { code: "OptimisticConcurrencyControlFailure", message: "x" }).retryable).toBe(true);
    expect(map(500, null).retryable).toBe(true);
    expect(map(429, null).retryable).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422]) expect(map(status, null).retryable).toBe(false);
    expect(new BackendTimeoutError("x", 10).retryable).toBe(true);
    expect(new BackendNetworkError("x", new TypeError("fetch failed")).retryable).toBe(true);
    expect(new BackendApiError("x", { operation: "x" }).retryable).toBe(false);
  });

  it("never carries the call's secrets, even when the server echoes them", () => {
    const token = "team-token-abcdef123456";
    const error = map(401, { code: `Bad ${token}`, message: `token ${token} and key project:a:b|secretpart rejected` }, [token]);
    expect(error.message).not.toContain(token);
    expect(error.upstreamCode).not.toContain(token);
    expect(error.message).not.toContain("secretpart");
  });
});

describe("scrubUpstreamText", () => {
  it("removes secrets, collapses whitespace and truncates", () => {
    expect(scrubUpstreamText("a  SECRET\n b", ["SECRET"])).toBe("a [REDACTED] b");
    expect(scrubUpstreamText("x".repeat(400), [])).toHaveLength(301);
  });
});
