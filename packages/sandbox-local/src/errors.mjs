/** An error the HTTP layer answers with `status` and E2B's `{ code, message }` body. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
