import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { certificateOf, ensureCertificateOf } from "@/lib/updates";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const pemResponse = (certificate: string, status = 200) =>
  new Response(certificate, {
    status,
    headers: { "content-type": "application/x-pem-file", "content-disposition": 'attachment; filename="certificate.pem"' },
  });

/**
 * POST /api/projects/<id>/updates/certificate (owner only): turns on code signing. Creates the
 * project's key on first call (201; 200 after) and answers its certificate (PEM), which the app's
 * `updates.codeSigningCertificate` names. The private key stays on the server.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const { certificate, created } = await ensureCertificateOf(project.id);
  return pemResponse(certificate, created ? 201 : 200);
});

/** GET /api/projects/<id>/updates/certificate (owner only): downloads the certificate; 404 before the POST. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return pemResponse(await certificateOf(project.id));
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
