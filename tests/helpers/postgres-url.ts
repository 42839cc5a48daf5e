/** The machine's PostgreSQL (trust auth); override with TEST_POSTGRES_URL. */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
