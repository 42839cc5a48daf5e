import { describe, inject } from "vitest";

/**
 * `describe` for suites that need the test PostgreSQL: skipped (hooks included) when global setup
 * found it unreachable, which it only allows when REQUIRE_POSTGRES is unset.
 */
export const describeWithPostgres = describe.skipIf(!inject("postgresAvailable"));

export { createThrowawayDatabase } from "./throwaway-database";
