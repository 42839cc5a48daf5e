import { redactSecrets } from "./redact";

export { redactSecrets, registerSecret } from "./redact";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, "silent">;

function threshold(): number {
  const configured = process.env.LOG_LEVEL as keyof typeof LEVELS | undefined;
  return LEVELS[configured ?? "info"] ?? LEVELS.info;
}

function describe(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  if (LEVELS[level] < threshold()) return;
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    message,
    ...Object.fromEntries(Object.entries(fields ?? {}).map(([key, value]) => [key, describe(value)])),
  });
  const safe = redactSecrets(line);
  if (level === "error" || level === "warn") console.error(safe);
  else console.log(safe);
}

/** Structured, one-line JSON logger; every line passes through secret redaction. */
export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};
