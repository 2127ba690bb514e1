import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import { publishEvent } from "../../engine/events.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, isPrivileged, requireAdmin } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { pageOf } from "../../shared/pagination.ts";
import { assertAgentRef, recheckAgentRef, recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import {
  assertMayMove,
  assertMove,
  assertVersion,
  assertWritesAsItself,
  checkedOut,
  moved,
  nextCommentCount,
  released,
} from "./lifecycle.ts";
import {
  checkoutInput,
  commentInput,
  createInput,
  listInput,
  type Mission,
  missionComment,
  missionIdInput,
  missionPage,
  missionRecord,
  missionWithComments,
  purgeAgentInput,
  purgeInput,
  transitionInput,
} from "./schema.ts";
import {
  addComment,
  listMissions,
  listPosition,
  loadMission,
  missionsById,
  missionsScope,
  purgeComments,
  purgeMissions,
  recentComments,
} from "./store.ts";

const TOPIC = "mission.lifecycle";
const COMMENTS_SHOWN = 50;

/** Missions: a realm's work items, taken by agents with an atomic checkout (DESIGN §5). */
export function registerMission(worker: WorkerClient): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const publish = (data: Record<string, unknown>) => publishEvent(trigger, TOPIC, data);

  /**
   * One compare-and-swap step on a mission of a writable realm: `change` sees the stored mission and
   * throws to refuse, so of two concurrent writers exactly one sees the state it decided on.
   */
  const change = async (
    ctx: InvocationContext,
    realmId: string,
    id: string,
    step: (mission: Mission, now: string) => Mission,
  ): Promise<{ before: Mission; after: Mission }> => {
    assertRealmAccess(ctx, realmId);
    await requireRealm(trigger, realmId, { write: true });
    let before: Mission | undefined;
    const { value } = await casUpdate<Mission>(state, missionsScope(realmId), id, ({ value: stored }) => {
      if (!stored) throw notFound(`Mission ${id} not found in realm ${realmId}`);
      before = stored;
      return step(stored, nowIso());
    });
    return { before: before as Mission, after: value as Mission };
  };

  /** A deleted agent's mission, if still its own, back to the queue (finished work stays finished). */
  const giveBack = (realmId: string, id: string, agentId: string) =>
    casUpdate<Mission>(state, missionsScope(realmId), id, ({ value }) =>
      value?.assigneeId === agentId
        ? {
            ...value,
            assigneeId: null,
            status: requeued(value.status),
            version: value.version + 1,
            updatedAt: nowIso(),
          }
        : undefined,
    );

  worker.registerFunction(
    {
      id: "mission::create",
      description: "Create a mission (status backlog, unassigned)",
      input: createInput,
      output: missionRecord,
    },
    async (input, ctx) => {
      const { realmId, directiveId, parentId } = input;
      assertRealmAccess(ctx, realmId);
      assertWritesAsItself(ctx.auth, "createdBy", input.createdBy);
      await requireRealm(trigger, realmId, { write: true });
      await assertAgentRef(trigger, input.createdBy, realmId);
      if (parentId !== undefined && !(await loadMission(state, realmId, parentId))) {
        throw badRequest(`parent mission ${parentId} not found in realm ${realmId}`);
      }
      if (directiveId !== undefined) await requireDirective(directiveId, realmId);
      const now = nowIso();
      const mission: Mission = {
        ...input,
        id: newId("msn"),
        status: "backlog",
        priority: input.priority ?? "normal",
        assigneeId: null,
        commentCount: 0,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      await state.set(missionsScope(realmId), mission.id, mission, 0);
      await recheckRealm(trigger, realmId, () => purgeMissions(state, realmId));
      publish({ type: "created", missionId: mission.id, realmId, createdBy: mission.createdBy });
      return mission;
    },
  );

  const requireDirective = async (directiveId: string, realmId: string) => {
    const found = await call(trigger, "directive::get", { realmId, id: directiveId }).catch(
      (error: { status?: number }) => {
        if (error?.status === 404) return null;
        throw error;
      },
    );
    if (!found) throw badRequest(`directive ${directiveId} not found in realm ${realmId}`);
  };

  worker.registerFunction(
    {
      id: "mission::get",
      description: `A mission with its newest ${COMMENTS_SHOWN} comments`,
      input: missionIdInput,
      output: missionWithComments,
    },
    async ({ realmId, id }, ctx) => {
      assertRealmAccess(ctx, realmId);
      const mission = await loadMission(state, realmId, id);
      if (!mission) throw notFound(`Mission ${id} not found in realm ${realmId}`);
      return { ...mission, comments: await recentComments(state, realmId, id, COMMENTS_SHOWN) };
    },
  );

  worker.registerFunction(
    {
      id: "mission::list",
      description:
        "A realm's missions by priority then age, filtered by assigneeId, status, directiveId: {missions, count, nextCursor}",
      input: listInput,
      output: missionPage,
    },
    async ({ limit, cursor, ...filter }, ctx) => {
      assertRealmAccess(ctx, filter.realmId);
      await requireRealm(trigger, filter.realmId);
      const matching = await listMissions(state, filter);
      const page = pageOf(matching, listPosition, { limit, cursor });
      const missions = await missionsById(
        state,
        filter.realmId,
        page.items.map((mission) => mission.id),
      );
      return { missions, count: matching.length, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "mission::checkout",
      description:
        "An agent takes a mission (from backlog, queued or blocked): atomic, of concurrent checkouts one wins",
      input: checkoutInput,
      metadata: ACTS_FOR_AGENT,
      output: missionRecord,
    },
    async ({ realmId, id, agentId }, ctx) => {
      // The realm first: an agent check before it would tell another realm's key where an agent lives.
      assertRealmAccess(ctx, realmId);
      const known = await assertAgentRef(trigger, agentId, realmId);
      const { before, after } = await change(ctx, realmId, id, (mission, now) =>
        checkedOut(mission, agentId, now),
      );
      // An agent delete that began meanwhile may have put its missions back already: this one goes too.
      await recheckAgentRef(trigger, agentId, realmId, known, () => giveBack(realmId, id, agentId));
      publish({ type: "checked_out", missionId: id, realmId, agentId, from: before.status });
      return after;
    },
  );

  worker.registerFunction(
    {
      id: "mission::release",
      description: "The assignee gives a mission back: queued, unassigned",
      input: checkoutInput,
      metadata: ACTS_FOR_AGENT,
      output: missionRecord,
    },
    async ({ realmId, id, agentId }, ctx) => {
      const { before, after } = await change(ctx, realmId, id, (mission, now) =>
        released(mission, agentId, now),
      );
      publish({ type: "released", missionId: id, realmId, agentId, from: before.status });
      return after;
    },
  );

  worker.registerFunction(
    {
      id: "mission::transition",
      description: "Move a mission to another status (refused moves are a 409 naming both states)",
      input: transitionInput,
      metadata: ACTS_FOR_AGENT,
      output: missionRecord,
    },
    async ({ realmId, id, status, agentId, reason, expectedVersion }, ctx) => {
      const { before, after } = await change(ctx, realmId, id, (mission, now) => {
        assertVersion(mission, expectedVersion);
        assertMove(mission, status);
        assertMayMove(mission, agentId, isPrivileged(ctx.auth));
        return moved(mission, status, now);
      });
      publish({
        type: "transitioned",
        missionId: id,
        realmId,
        from: before.status,
        to: after.status,
        agentId: agentId ?? null,
        reason: reason ?? null,
      });
      return after;
    },
  );

  worker.registerFunction(
    {
      id: "mission::comment",
      description: "Add a comment to a mission",
      input: commentInput,
      output: missionComment,
    },
    async ({ realmId, id, authorId, body }, ctx) => {
      assertRealmAccess(ctx, realmId);
      assertWritesAsItself(ctx.auth, "authorId", authorId);
      const now = nowIso();
      const comment = { id: newId("cmt"), missionId: id, authorId, body, createdAt: now };
      await change(ctx, realmId, id, (mission) => ({
        ...mission,
        commentCount: nextCommentCount(mission),
        updatedAt: now,
      }));
      await addComment(state, realmId, comment);
      // A realm delete whose purge may have passed this mission already: its comments go here instead.
      await recheckRealm(trigger, realmId, () => purgeComments(state, realmId, id));
      publish({ type: "commented", missionId: id, realmId, commentId: comment.id, authorId });
      return comment;
    },
  );

  worker.registerFunction(
    {
      id: "mission::purge_realm",
      description: "Delete every mission of a realm with its comments (part of a realm delete); idempotent",
      input: purgeInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return { purged: await purgeMissions(state, realmId) };
    },
  );

  worker.registerFunction(
    {
      id: "mission::purge_agent",
      description: "A deleted agent's missions go back to the queue (part of an agent delete)",
      input: purgeAgentInput,
    },
    async ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      const held = await listMissions(state, { realmId, assigneeId: agentId });
      for (const mission of held) await giveBack(realmId, mission.id, agentId);
      return { released: held.length };
    },
  );

  worker.registerRoute("mission::create", "POST", "/api/missions", { status: 201 });
  worker.registerRoute("mission::list", "GET", "/api/missions/:realmId");
  worker.registerRoute("mission::get", "GET", "/api/missions/:realmId/:id");
  worker.registerRoute("mission::checkout", "POST", "/api/missions/:realmId/:id/checkout");
  worker.registerRoute("mission::release", "POST", "/api/missions/:realmId/:id/release");
  worker.registerRoute("mission::transition", "POST", "/api/missions/:realmId/:id/transition");
  worker.registerRoute("mission::comment", "POST", "/api/missions/:realmId/:id/comments", { status: 201 });
  return {};
}

/** Work in progress of a deleted agent waits in the queue again; finished work stays finished. */
function requeued(status: Mission["status"]): Mission["status"] {
  return status === "active" || status === "review" ? "queued" : status;
}
