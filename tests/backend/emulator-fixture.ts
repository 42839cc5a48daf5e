import type { ManagedProjectInput } from "@/lib/backend";
import type { EmulatorOptions } from "@/lib/emulator";
import { startEmulatorServer, type EmulatorServer } from "@/lib/emulator/server";
import { getStore } from "@/lib/store";
import { contractRecorder } from "../contract/openapi";

/**
 * An emulator served over loopback HTTP, plus the client options and team credentials that reach
 * it. Every exchange is checked against the OpenAPI documents; `server.close()` fails the test
 * file when one broke the contract.
 */
export interface TestEmulator {
  server: EmulatorServer;
  /** Management-API options pointing at the emulator. */
  management: { provisionHost: string; timeoutMs: number };
  dashboard: { dashboardHost: string };
  /** The built-in team's credentials. */
  team: Pick<ManagedProjectInput, "teamScopedToken" | "teamSlug">;
  /** The documented operations this emulator answered so far, with their statuses. */
  operations: () => Map<string, number[]>;
}

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  // Open (and migrate) the store first, so a test's first call does not pay for it within its timeout.
  await (options.db ?? getStore());
  const contract = contractRecorder();
  const server = await startEmulatorServer({ ...options, onExchange: contract.onExchange });
  const { identity } = server.emulator;
  const close = async () => {
    await server.close();
    contract.verify();
  };
  return {
    server: { ...server, close },
    management: { provisionHost: server.baseUrl, timeoutMs: 10_000 },
    dashboard: { dashboardHost: server.dashboardUrl },
    team: { teamScopedToken: identity.teamToken, teamSlug: identity.teamSlug },
    operations: () => contract.operations(),
  };
}

/** A fetch that counts the calls it forwards (retry assertions). */
export function countingFetch(): { fetch: typeof fetch; calls: () => number } {
  let count = 0;
  return {
    fetch: (input, init) => {
      count += 1;
      return fetch(input, init);
    },
    calls: () => count,
  };
}

/** Reads the hidden inputs of the consent page's form, as a browser would post them. */
export function consentFormFields(html: string): URLSearchParams {
  const form = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(match[1], decodeHtml(match[2]));
  }
  return form;
}

function decodeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Walks the consent page like a user clicking "Authorize"; returns the redirect target. */
export async function clickAuthorize(authorizeUrl: string): Promise<URL> {
  const page = await fetch(authorizeUrl);
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}`);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1];
  if (!action) throw new Error("no consent form");
  const granted = await fetch(new URL(decodeHtml(action), authorizeUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: consentFormFields(html).toString(),
    redirect: "manual",
  });
  if (granted.status !== 303) throw new Error(`consent answered ${granted.status}`);
  return new URL(granted.headers.get("location")!);
}
