import { getConfig } from "@/lib/config";
import { methodNotAllowed, route } from "@/lib/http";
import { getStore, pingStore } from "@/lib/store";

export const dynamic = "force-dynamic";

export const GET = route(async () => {
  const config = getConfig();
  const db = await getStore();
  await pingStore(db);
  return Response.json({
    ok: true,
    store: db.kind,
    blob: config.BLOB_DRIVER,
    sandbox: config.SANDBOX_DRIVER,
    realtime: config.REALTIME_DRIVER,
    backendProvider: config.BACKEND_PROVIDER,
  });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
