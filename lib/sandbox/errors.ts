import { AppError, isErrorOf } from "@/lib/errors";
import { redactSecrets } from "@/lib/log";
import type { CommandResult } from "./port";

/**
 * Base of every sandbox failure. Extends AppError so a route that lets one escape answers
 * `{error:{code,message}}`; the default status is 502 because the sandbox is an upstream.
 */
export class SandboxError extends AppError {
  constructor(message: string, options?: { status?: number; code?: string; cause?: unknown }) {
    super(options?.status ?? 502, options?.code ?? "sandbox_error", message, { cause: options?.cause });
  }
}

/** Whether `error` is a `type`, also one thrown by another bundle's copy of these classes (isErrorOf). */
export const isSandboxError: <T extends SandboxError>(error: unknown, type: abstract new (...args: never[]) => T) => error is T = isErrorOf;

/** Thrown when an argument is unusable, e.g. a path that is not absolute POSIX text. */
export class InvalidArgumentError extends SandboxError {
  constructor(message: string, code = "sandbox_invalid_argument") {
    super(message, { status: 400, code });
  }
}

/** Thrown when a path resolves outside the sandbox home (`..`, symlinks, NUL, host paths). */
export class PathOutsideSandboxError extends InvalidArgumentError {
  constructor(path: string) {
    super(`The path ${JSON.stringify(path)} is outside the sandbox.`, "sandbox_path_refused");
  }
}

/** Thrown when a file or directory the caller needs does not exist. */
export class FileNotFoundError extends SandboxError {
  constructor(path: string) {
    super(`No such file or directory in the sandbox: ${path}`, { status: 404, code: "sandbox_file_not_found" });
  }
}

/** Thrown when a sandbox id is unknown or the sandbox was killed. */
export class SandboxNotFoundError extends SandboxError {
  constructor(sandboxId: string) {
    super(`Sandbox ${sandboxId} does not exist or is no longer running.`, { status: 404, code: "sandbox_not_found" });
  }
}

/** Thrown when a command outlives its `timeoutMs` (it has been killed by then). */
export class SandboxTimeoutError extends SandboxError {
  constructor(message: string) {
    super(message, { status: 504, code: "sandbox_timeout" });
  }
}

const STDERR_TAIL_CHARS = 500;

/**
 * Thrown when a command ends with a non-zero exit code, or by a signal (exit code -1).
 * Carries the whole result; the message holds only a redacted tail of stderr.
 */
export class CommandExitError extends SandboxError implements CommandResult {
  readonly exitCode: number;
  readonly error?: string;
  readonly stdout: string;
  readonly stderr: string;

  constructor(result: CommandResult) {
    const tail = result.stderr.trim().slice(-STDERR_TAIL_CHARS);
    const reason = result.error ?? `exit code ${result.exitCode}`;
    super(`Command failed (${reason})${tail ? `: ${redactSecrets(tail)}` : "."}`, { code: "sandbox_command_failed" });
    this.exitCode = result.exitCode;
    this.error = result.error;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
  }
}
