// Runs s3rver in its own Node process, started by tests/blob/s3rver.ts with
// --openssl-legacy-provider: s3rver encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 only offers through the legacy provider (without it every truncated list is a 500).
import S3rver from "s3rver";

const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory: process.env.S3RVER_DIRECTORY,
  resetOnClose: true,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET }],
});
const { port } = await server.run();
process.send({ port });
process.on("disconnect", async () => {
  await server.close();
  process.exit(0);
});
