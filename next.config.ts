import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Server-only packages with native parts or large SDKs stay out of the route bundles.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "e2b",
    "puppeteer-core",
    "pusher",
    "@aws-sdk/client-s3",
    "@aws-sdk/lib-storage",
    "file-type",
    "busboy",
    "recast",
    "@babel/parser",
  ],
  poweredByHeader: false,
};

export default nextConfig;
