import { z } from "zod";
import { pageFields } from "../../shared/pagination.ts";

export const BINDINGS_SCOPE = "channel_agents";
const text = (field: string, max = 256) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(max, `${field} must be at most ${max} characters`)
    .refine(
      (value) => ![...value].some((c) => c.charCodeAt(0) < 32),
      `${field} must not contain control characters`,
    );

/** A platform name (`slack`, …) or `webhook` for the generic route. */
export const platformField = text("platform", 64).refine(
  (value) => /^[a-z0-9_-]+$/.test(value),
  "platform is lower-case letters, digits, _ and -",
);

export const bindInput = z.strictObject({
  platform: platformField,
  channelId: text("channelId", 512),
  agentId: text("agentId"),
});
export const listBindingsInput = z.strictObject({
  realmId: text("realmId").optional(),
  platform: platformField.optional(),
  ...pageFields,
});
export const unbindInput = z.strictObject({ platform: platformField, channelId: text("channelId", 512) });

export interface Binding {
  platform: string;
  channelId: string;
  agentId: string;
  realmId: string;
  createdAt: string;
}

export const bindingKey = (platform: string, channelId: string) => `${platform}:${channelId}`;
