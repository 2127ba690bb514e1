import { publishEvent } from "../../engine/events.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, requireAdmin } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { oldestFirst, pageOf } from "../../shared/pagination.ts";
import { assertAgentRef, recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { applyChanges, assertNotEmpty, assertVersion } from "./lifecycle.ts";
import {
  ancestryAnswer,
  createInput,
  type Directive,
  directiveIdInput,
  directivePage,
  directiveRecord,
  listInput,
  purgeInput,
  updateInput,
} from "./schema.ts";
import {
  ancestryOf,
  directivesById,
  directivesScope,
  loadDirective,
  matchingDirectives,
  purgeDirectives,
} from "./store.ts";

const TOPIC = "directive.lifecycle";

/** Directives: a realm's goal trees, with a status machine and compare-and-swap updates (DESIGN §5, §6). */
export function registerDirective(worker: WorkerClient): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);

  // Events are fire-and-forget and published as the service: the caller's key grants the write, and
  // a subscriber failing must not undo it.
  const publish = (data: Record<string, unknown>) => publishEvent(trigger, TOPIC, data);

  const load = async (realmId: string, id: string): Promise<Directive> => {
    const directive = await loadDirective(state, realmId, id);
    if (!directive) throw notFound(`Directive ${id} not found in realm ${realmId}`);
    return directive;
  };

  worker.registerFunction(
    {
      id: "directive::create",
      description: "Create a directive (status Active, version 1)",
      input: createInput,
      output: directiveRecord,
    },
    async (input, ctx) => {
      const { realmId, parentId, ownerAgentId } = input;
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId, { write: true });
      if (parentId !== undefined && !(await loadDirective(state, realmId, parentId))) {
        throw badRequest(`parent directive ${parentId} not found in realm ${realmId}`);
      }
      if (ownerAgentId !== undefined) await assertAgentRef(trigger, ownerAgentId, realmId);
      const now = nowIso();
      const directive: Directive = {
        ...input,
        id: newId("dir"),
        status: "Active",
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      // expectedVersion 0: the key must be new, so a (vanishingly unlikely) id clash cannot overwrite.
      await state.set(directivesScope(realmId), directive.id, directive, 0);
      // A realm delete that began meanwhile has purged, or will purge, what it saw: see to the rest.
      await recheckRealm(trigger, realmId, () => purgeDirectives(state, realmId));
      publish({ type: "created", directiveId: directive.id, realmId });
      return directive;
    },
  );

  worker.registerFunction(
    {
      id: "directive::get",
      description: "A directive of a realm",
      input: directiveIdInput,
      output: directiveRecord,
    },
    async ({ realmId, id }, ctx) => {
      assertRealmAccess(ctx, realmId);
      return load(realmId, id);
    },
  );

  worker.registerFunction(
    {
      id: "directive::list",
      description:
        "A realm's directives, oldest first, filtered by level, status, parentId: {directives, count, nextCursor}",
      input: listInput,
      output: directivePage,
    },
    async ({ limit, cursor, ...filter }, ctx) => {
      assertRealmAccess(ctx, filter.realmId);
      await requireRealm(trigger, filter.realmId);
      const matching = await matchingDirectives(state, filter);
      const page = pageOf(matching, (entry) => oldestFirst(entry.createdAt, entry.id), { limit, cursor });
      const directives = await directivesById(
        state,
        filter.realmId,
        page.items.map((entry) => entry.id),
      );
      // count: every directive the filter matches, across pages.
      return { directives, count: matching.length, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "directive::update",
      description:
        "Change title, description, status, priority or owner; expectedVersion makes it conditional",
      input: updateInput,
      output: directiveRecord,
    },
    async ({ realmId, id, expectedVersion, ...changes }, ctx) => {
      assertRealmAccess(ctx, realmId);
      assertNotEmpty(changes);
      await requireRealm(trigger, realmId, { write: true });
      if (changes.ownerAgentId) await assertAgentRef(trigger, changes.ownerAgentId, realmId);
      let before: Directive | undefined;
      const { value } = await casUpdate<Directive>(state, directivesScope(realmId), id, ({ value }) => {
        if (!value) throw notFound(`Directive ${id} not found in realm ${realmId}`);
        // Checked inside the CAS step: a write landing between read and write makes the retry see
        // the new version and refuse, so of two updates expecting one version exactly one wins.
        assertVersion(value, expectedVersion);
        before = value;
        return applyChanges(value, changes, nowIso());
      });
      const updated = value as Directive;
      publish({ type: "updated", directiveId: id, realmId, version: updated.version });
      if (before && before.status !== updated.status) {
        publish({
          type: "status_changed",
          directiveId: id,
          realmId,
          from: before.status,
          to: updated.status,
        });
      }
      return updated;
    },
  );

  worker.registerFunction(
    {
      id: "directive::ancestry",
      description: "A directive and its parents up to the root: {ancestry: [{id, title, level}], depth}",
      input: directiveIdInput,
      output: ancestryAnswer,
    },
    async ({ realmId, id }, ctx) => {
      assertRealmAccess(ctx, realmId);
      const ancestry = await ancestryOf(state, await load(realmId, id));
      return { ancestry, depth: ancestry.length };
    },
  );

  worker.registerFunction(
    {
      id: "directive::purge_realm",
      description: "Delete every directive of a realm (part of a realm delete); idempotent",
      input: purgeInput,
    },
    async ({ realmId }, ctx) => {
      // An internal cascade step: admin or system only (a realm's own key may not wipe its goals).
      requireAdmin(ctx);
      return { purged: await purgeDirectives(state, realmId) };
    },
  );

  worker.registerRoute("directive::create", "POST", "/api/directives", { status: 201 });
  worker.registerRoute("directive::list", "GET", "/api/directives/:realmId");
  worker.registerRoute("directive::get", "GET", "/api/directives/:realmId/:id");
  worker.registerRoute("directive::update", "PATCH", "/api/directives/:realmId/:id");
  worker.registerRoute("directive::ancestry", "GET", "/api/directives/:realmId/:id/ancestry");
  return {};
}
