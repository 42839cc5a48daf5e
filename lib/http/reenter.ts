const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * Whether a GET is a navigation another site started, which brings no SameSite=Strict session
 * cookie (an OAuth consent page redirecting back, for one). Opened again from a page of ours, the
 * same URL gets the cookie, and `Sec-Fetch-Site: same-origin`, so this re-enters at most once.
 */
export function isCrossSiteNavigation(request: Request): boolean {
  return request.method === "GET" && request.headers.get("sec-fetch-site") === "cross-site";
}

/**
 * A page of ours that at once opens `url` again. Because our own page starts that navigation,
 * the browser sends the SameSite=Strict session cookie with it.
 */
export function reenterResponse(url: string): Response {
  const target = new URL(url);
  const href = escapeHtml(target.pathname + target.search);
  const html = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${href}"><title>Continuing…</title><p><a href="${href}">Continue</a></p>`;
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}
