/** Methods that must not change state, so cross-site requests with them are harmless. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a cookie-authenticated request may act for its user: safe methods always; anything
 * else only when the browser says it comes from the dashboard's own origin, by an `Origin` equal
 * to `dashboardOrigin` or by `Sec-Fetch-Site: same-origin` (both are headers pages cannot set).
 * A request that carries neither is refused: every browser in use sends at least one of them on
 * a state-changing request.
 */
export function isSameOriginRequest(request: Request, dashboardOrigin: string): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  return request.headers.get("origin") === dashboardOrigin || request.headers.get("sec-fetch-site") === "same-origin";
}

let lastOrigin: { baseUrl: string; origin: string } | undefined;

/** The origin of the dashboard's base URL (PUBLIC_BASE_URL), parsed once rather than per request. */
export function originOf(baseUrl: string): string {
  if (lastOrigin?.baseUrl !== baseUrl) lastOrigin = { baseUrl, origin: new URL(baseUrl).origin };
  return lastOrigin.origin;
}
