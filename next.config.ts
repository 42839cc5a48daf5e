import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Server-only packages with native parts or large SDKs stay out of the route bundles.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "pg-boss",
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
  experimental: {
    // Server code keeps its class names: an error's `name` (in logs) is its class's name.
    serverMinification: false,
    // Turbopack's on-disk build cache only speeds up a later rebuild of changed sources, yet
    // writing it held the first start's build open 54 s past its last page (118 s of writing on
    // this 2-core machine at a load average of 20); `npm start` builds once per checkout.
    turbopackFileSystemCacheForBuild: false,
  },
  // `npm run lint` (part of `npm test` and CI) runs `tsc --noEmit` over the whole project; the
  // production build would repeat that check on every first start.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
