import { requireUser } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { readAppToolchainStatus, warmUpAppToolchain } from "@/lib/toolchain";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** GET /api/toolchain: whether the app toolchain is ready, being prepared, or failed (with npm's reason). */
export const GET = route(async (request) => {
  await requireUser(request);
  return Response.json(await readAppToolchainStatus());
});

/** POST /api/toolchain: (re)starts preparing it, e.g. after the registry could not be reached; 202 with the state. */
export const POST = route(async (request) => {
  await requireUser(request);
  return Response.json(warmUpAppToolchain(), { status: 202 });
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
