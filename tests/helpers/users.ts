import { generateApiToken, hashApiToken } from "@/lib/auth";
import type { SqlExecutor } from "@/lib/store";
import { insertApiToken, insertUser, type User } from "@/lib/store/users";

/** A user with a fresh API token, and the headers to call the API as that user. */
export async function createTestUser(db: SqlExecutor, name = "Test user"): Promise<{ user: User; token: string; headers: Record<string, string> }> {
  const user = await insertUser(db, { name, email: `${crypto.randomUUID()}@example.com` });
  const token = generateApiToken();
  await insertApiToken(db, { userId: user.id, tokenHash: hashApiToken(token), label: "test" });
  return { user, token, headers: { authorization: `Bearer ${token}` } };
}
