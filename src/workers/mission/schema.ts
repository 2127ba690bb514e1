import { z } from "zod";
import { looseEnum } from "../../shared/loose-enum.ts";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const MISSION_STATUSES = [
  "backlog",
  "queued",
  "active",
  "review",
  "complete",
  "blocked",
  "cancelled",
] as const;
export const MISSION_PRIORITIES = ["critical", "high", "normal", "low"] as const;

export type MissionStatus = (typeof MISSION_STATUSES)[number];
export type MissionPriority = (typeof MISSION_PRIORITIES)[number];

export const missionRecord = z.object({
  id: z.string(),
  realmId: z.string(),
  title: z.string(),
  description: z.string().optional(),
  status: z.enum(MISSION_STATUSES),
  priority: z.enum(MISSION_PRIORITIES),
  /** Opaque agent ids (DESIGN §5): the agent may live in an external runtime. */
  assigneeId: z.string().nullable(),
  createdBy: z.string(),
  directiveId: z.string().optional(),
  parentId: z.string().optional(),
  billingCode: z.string().optional(),
  commentCount: z.number(),
  version: z.number(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Mission = z.infer<typeof missionRecord>;

export const missionComment = z.object({
  id: z.string(),
  missionId: z.string(),
  authorId: z.string(),
  body: z.string(),
  createdAt: z.string(),
});
export type MissionComment = z.infer<typeof missionComment>;

export const missionWithComments = missionRecord.extend({
  comments: z.array(missionComment).describe("The most recent comments, oldest first"),
});
export const missionPage = z.object({
  missions: z.array(missionRecord),
  count: z.number().describe("How many missions match, over all pages"),
  nextCursor,
});

const id = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(256, `${field} must be at most 256 characters`);
const text = (field: string, max: number) =>
  z.string({ error: `${field} must be a string` }).max(max, `${field} must be at most ${max} characters`);

export const status = looseEnum("status", MISSION_STATUSES);
export const priority = looseEnum("priority", MISSION_PRIORITIES);

export const createInput = z.strictObject({
  realmId: id("realmId"),
  title: text("title", 500).trim().min(1, "title is required"),
  createdBy: id("createdBy"),
  description: text("description", 10_000).optional(),
  directiveId: id("directiveId").optional(),
  parentId: id("parentId").optional(),
  priority: priority.optional(),
  billingCode: id("billingCode").optional(),
});
export type CreateInput = z.output<typeof createInput>;

export const missionIdInput = z.strictObject({ realmId: id("realmId"), id: id("id") });

export const listInput = z.strictObject({
  realmId: id("realmId"),
  assigneeId: id("assigneeId").optional(),
  status: status.optional(),
  directiveId: id("directiveId").optional(),
  ...pageFields,
});
export type ListFilter = Omit<z.output<typeof listInput>, "limit" | "cursor">;

export const checkoutInput = missionIdInput.extend({ agentId: id("agentId") });

export const transitionInput = missionIdInput.extend({
  status,
  /** Who moves it: required to move an active mission with a realm key (the assignee only). */
  agentId: id("agentId").optional(),
  reason: text("reason", 2000).optional(),
  expectedVersion: z
    .number({ error: "expectedVersion must be an integer" })
    .int("expectedVersion must be an integer")
    .min(1, "expectedVersion must be at least 1")
    .optional(),
});

export const commentInput = missionIdInput.extend({
  authorId: id("authorId"),
  body: text("body", 20_000).trim().min(1, "body is required"),
});

export const purgeInput = z.strictObject({ realmId: id("realmId") });
export const purgeAgentInput = z.strictObject({ realmId: id("realmId"), agentId: id("agentId") });
