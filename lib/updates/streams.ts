import crypto from "node:crypto";
import { z } from "zod";

/** The platforms expo-updates runs on (`expo-platform`); bundles are exported for each. */
export const PLATFORMS = ["ios", "android"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** The channel of a request without `expo-channel-name`, and of a publish that names none. */
export const DEFAULT_CHANNEL = "main";

const CHANNEL_NAME = /^[\w.-]{1,64}$/;
export const isChannelName = (name: string) => CHANNEL_NAME.test(name);
export const channelSchema = z.string().regex(CHANNEL_NAME, "must be 1 to 64 letters, digits, ., _ or -");
export const rolloutPercentSchema = z.number().int().min(1).max(100);

/**
 * Whether a device is among the `percent` % that get a staged release. The device's place (0–99)
 * comes from a hash of its `eas-client-id` and the released commit: the same device always gets
 * the same answer, a raise only adds devices, and each release draws its own devices. A request
 * without an id is left out: it gets the full release.
 */
export function isInRollout(commitSha: string | null, clientId: string | null, percent: number): boolean {
  if (percent >= 100) return true;
  if (!clientId) return false;
  const digest = crypto.createHash("sha256").update(`${commitSha ?? "embedded"}\0${clientId.toLowerCase()}`).digest();
  return digest.readUInt32BE(0) % 100 < percent;
}
