/** The emulator's OAuth consent page: one form, one "Authorize" button. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]);
}

/** No scripts, no framing (clickjacking), inline styles only. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#111}" +
  "button{font-size:1rem;padding:.6rem 1.4rem;border:0;border-radius:.4rem;background:#1f4fd1;color:#fff;cursor:pointer}" +
  "code{background:#f2f2f2;padding:.1rem .3rem;border-radius:.2rem}";

function page(title: string, body: string, status: number): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
  return new Response(html, { status, headers: PAGE_HEADERS });
}

/**
 * Renders the consent form. `fields` are the validated authorize parameters, posted back
 * unchanged as hidden inputs to the same URL.
 */
export function renderConsentPage(input: { action: string; teamSlug: string; redirectUri: string; fields: Record<string, string> }): Response {
  const hidden = Object.entries(input.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  const redirectOrigin = new URL(input.redirectUri).origin;
  return page(
    "Authorize application",
    `<h1>Authorize application</h1>` +
      `<p>An application wants to create and manage projects on the team <code>${escapeHtml(input.teamSlug)}</code>.</p>` +
      `<p>You will be sent back to <code>${escapeHtml(redirectOrigin)}</code>.</p>` +
      `<form method="post" action="${escapeHtml(input.action)}">${hidden}<button type="submit">Authorize</button></form>` +
      `<p><small>Local backend emulator: whoever opens this page acts as the signed-in owner of the team.</small></p>`,
    200,
  );
}

/** An authorize request that cannot be sent back to its redirect URI (unknown client, bad URI). */
export function renderAuthorizeError(message: string): Response {
  return page("Authorization failed", `<h1>Authorization failed</h1><p>${escapeHtml(message)}</p>`, 400);
}
