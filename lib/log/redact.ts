/**
 * Removes credentials from free text before it is logged, returned or published.
 * Covers the admin-key shapes of the backend (`project:<team>:<project>|<token>`,
 * `prod:<name>|<token>`, `dev:<name>|<token>`), bearer/Convex authorization values,
 * PEM private keys, and `NAME=value` assignments of secret-looking variables.
 */
const SECRET_PATTERNS: RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b(?:project|preview|prod|dev):[A-Za-z0-9_.:-]*\|[A-Za-z0-9+/=_-]+/g,
  // A `Convex` authorization value is a key with digits or a `|`; "Convex functions ready" is prose.
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=|:-]{8,}|\b(Convex)\s+(?=[A-Za-z._~+/=:-]*[0-9|])[A-Za-z0-9._~+/=|:-]{8,}/gi,
  /\b([A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PRIVATE_KEY|ADMIN_KEY|DEPLOY_KEY|API_KEY)[A-Z0-9_]*)\s*[=:]\s*("[^"]*"|'[^']*'|\S+)/g,
];

const exactSecrets = new Set<string>();

/** Registers a secret value (e.g. a configured token) so it is removed wherever it appears. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8) exactSecrets.add(value);
}

export function redactSecrets(text: string): string {
  let result = text;
  for (const secret of exactSecrets) result = result.split(secret).join("[REDACTED]");
  result = result.replace(SECRET_PATTERNS[0], "[REDACTED PRIVATE KEY]");
  result = result.replace(SECRET_PATTERNS[1], "[REDACTED KEY]");
  result = result.replace(SECRET_PATTERNS[2], (_match, scheme?: string, convex?: string) => `${scheme ?? convex} [REDACTED]`);
  result = result.replace(SECRET_PATTERNS[3], (_match, name: string) => `${name}=[REDACTED]`);
  return result;
}
