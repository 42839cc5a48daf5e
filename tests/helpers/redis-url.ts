/** The machine's Redis; override with TEST_REDIS_URL. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
