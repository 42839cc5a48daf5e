import next from "eslint-config-next";
import nextTypescript from "eslint-config-next/typescript";

const config = [
  ...next,
  ...nextTypescript,
  { ignores: [".next/**", ".data/**", "node_modules/**", "templates/**", "next-env.d.ts", "coverage/**"] },
];

export default config;
