import crypto from "node:crypto";

/** Names the emulator gives projects and deployments, shaped like the hosted ones. */

const ADJECTIVES = ["happy", "brave", "calm", "clever", "eager", "gentle", "jolly", "kind", "lively", "proud", "quiet", "witty"];
const ANIMALS = ["animal", "badger", "camel", "dolphin", "falcon", "gecko", "heron", "koala", "lynx", "otter", "panda", "quail"];

/** Longest project slug; the hosted API keeps slugs short too. */
const MAX_SLUG_LENGTH = 40;

/** `My App (v2)!` → `my-app-v2`; never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, "");
  return slug || "project";
}

/** The slug with a random suffix, for when the plain slug is taken on the team. */
export function suffixedSlug(slug: string): string {
  return `${slug.slice(0, MAX_SLUG_LENGTH - 5)}-${crypto.randomBytes(2).toString("hex")}`;
}

const pick = (words: string[]) => words[crypto.randomInt(words.length)];

/** A random deployment name such as `happy-otter-123`. */
export function randomDeploymentName(): string {
  return `${pick(ADJECTIVES)}-${pick(ANIMALS)}-${crypto.randomInt(100, 1000)}`;
}
