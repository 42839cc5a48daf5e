import { consentFormFields } from "../backend/emulator-fixture";

/** One page a browser ended on after following redirects. */
export interface Page {
  url: string;
  status: number;
  body: string;
  /** Every URL requested on the way, the first included. */
  visited: string[];
}

/**
 * A minimal browser: follows redirects (303 and 302 become GET) and sends the session cookie
 * only to the product's origin, as a browser sends a host-only cookie.
 */
export function createBrowser(productOrigin: string, sessionCookie: string | null) {
  async function go(url: string, init: { method: string; form?: URLSearchParams }, visited: string[] = []): Promise<Page> {
    visited.push(url);
    const headers: Record<string, string> = {};
    if (sessionCookie && new URL(url).origin === productOrigin) headers.cookie = sessionCookie;
    if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(url, { method: init.method, headers, body: init.form?.toString(), redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      return go(new URL(location, url).toString(), { method: "GET" }, visited);
    }
    return { url, status: response.status, body: await response.text(), visited };
  }

  return {
    visit: (url: string) => go(url, { method: "GET" }),
    /** Clicks the one submit button of the page's form (the consent page's "Authorize"). */
    submitForm(page: Page): Promise<Page> {
      const action = /<form method="post" action="([^"]+)">/.exec(page.body)?.[1];
      if (!action) throw new Error(`no form on ${page.url}`);
      return go(new URL(action.replace(/&amp;/g, "&"), page.url).toString(), { method: "POST", form: consentFormFields(page.body) });
    },
  };
}
