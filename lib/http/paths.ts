/** Whether every segment of a URL path percent-decodes (`%ff` alone is not UTF-8, `%zz` is no escape). */
export function isPercentDecodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

/** The JSON 400 of a URL path that is not correctly percent-encoded. */
export function malformedPathResponse(): Response {
  return Response.json({ error: { code: "invalid_path", message: "The URL path is not correctly percent-encoded." } }, { status: 400 });
}
