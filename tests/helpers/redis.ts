import { describe, inject } from "vitest";

/**
 * `describe` for suites that need the test Redis: skipped (hooks included) when global setup
 * found it unreachable, which it only allows when REQUIRE_REDIS is unset.
 */
export const describeWithRedis = describe.skipIf(!inject("redisAvailable"));
