import { AppError } from "@/lib/errors";

/** Thrown when a cookie-authenticated request that changes state comes from another site (CSRF). */
export class CrossSiteRequestError extends AppError {
  constructor() {
    super(
      403,
      "cross_site_request",
      "This request came from another site. Use the dashboard itself, or call the API with Authorization: Bearer <token>.",
    );
  }
}

/** Thrown when a Supabase user's email already belongs to another user of this service. */
export class EmailInUseError extends AppError {
  constructor() {
    super(
      409,
      "email_in_use",
      "Another account of this service already uses this email address. Sign in with that account's API token instead.",
    );
  }
}
