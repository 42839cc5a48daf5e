import crypto from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as listProjectsRoute } from "@/app/api/projects/route";
import { reloadConfig } from "@/lib/config";
import { getStore } from "@/lib/store";
import { getUser, insertUser } from "@/lib/store/users";

const JWT_SECRET = "test-supabase-jwt-secret-with-enough-length";

const supabaseToken = (sub: string, email: string) =>
  new SignJWT({ email, role: "authenticated" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setAudience("authenticated")
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(JWT_SECRET));

const listProjectsAs = async (token: string) =>
  listProjectsRoute(new Request("http://localhost:3000/api/projects", { headers: { authorization: `Bearer ${token}` } }), undefined);

beforeAll(() => {
  process.env.SUPABASE_JWT_SECRET = JWT_SECRET;
  reloadConfig();
});

describe("Supabase callers", () => {
  it("whose email belongs to another user are refused with 409 email_in_use, every time, and nothing is linked", async () => {
    const db = await getStore();
    const email = `${crypto.randomUUID()}@example.com`;
    const existing = await insertUser(db, { email, name: "Existing" });
    const sub = crypto.randomUUID();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const response = await listProjectsAs(await supabaseToken(sub, email));
      expect(response.status).toBe(409);
      expect(await response.json()).toEqual({ error: { code: "email_in_use", message: expect.stringContaining("already uses this email") } });
    }
    expect(await getUser(db, sub)).toBeNull();
    expect(await getUser(db, existing.id)).toMatchObject({ email, name: "Existing" });
  });

  it("are identified by sub: a new email for a known sub is the same user, and a known user without an email keeps working", async () => {
    const db = await getStore();
    const sub = crypto.randomUUID();
    const email = `${crypto.randomUUID()}@example.com`;
    expect((await listProjectsAs(await supabaseToken(sub, email))).status).toBe(200);
    expect((await listProjectsAs(await supabaseToken(sub, `${crypto.randomUUID()}@example.com`))).status).toBe(200);
    expect(await getUser(db, sub)).toMatchObject({ id: sub, email });

    const taken = `${crypto.randomUUID()}@example.com`;
    await insertUser(db, { email: taken, name: "Taken" });
    const noEmail = await insertUser(db, { id: crypto.randomUUID(), email: null, name: "No email yet" });
    expect((await listProjectsAs(await supabaseToken(noEmail.id, taken))).status).toBe(200);
    expect((await getUser(db, noEmail.id))?.email).toBeNull();
  });
});
