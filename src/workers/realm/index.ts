import { z } from "zod";
import { publishEvent } from "../../engine/events.ts";
import { stateClient } from "../../engine/state/client.ts";
import { systemCall } from "../../engine/system-call.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, isPrivileged, realmFilter, requireAdmin } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, conflict, forbidden, isAppError, isFunctionNotFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { oldestFirst, pageFields, pageOf } from "../../shared/pagination.ts";
import { purgeRealmData } from "./cascade.ts";
import { exportRealm } from "./export.ts";
import { importRealm } from "./import.ts";
import {
  createRealmInput,
  DEFAULT_REALM_ID,
  exportAnswer,
  exportInput,
  importInput,
  REALMS_SCOPE,
  type Realm,
  realmDeleted,
  realmIdInput,
  realmImported,
  realmPage,
  realmView,
  updateRealmInput,
} from "./schema.ts";
import {
  assertNotDeleting,
  assertWritable,
  checkTransition,
  ensureDefaultRealm,
  insertRealm,
  listRealms,
  patched,
  readRealm,
  updateRealm,
} from "./store.ts";

const UPDATABLE = "name, description, status, defaultModel, maxAgents, metadata";

/**
 * Realms: tenants of the service (DESIGN.md §5, README.md next to this file). Every realm-scoped worker
 * reads a realm through realm::get; a delete asks each of them to purge the realm's data.
 */
export function registerRealm(worker: WorkerClient): { ready: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);

  const publish = (data: Record<string, unknown>) => publishEvent(trigger, "realm.lifecycle", data);

  /** A default model must be one the catalog knows now (an alias or a local model is kept as written). */
  const checkModel = async (model: string) => {
    try {
      await systemCall(trigger, "catalog::resolve", { model });
    } catch (error) {
      if (isFunctionNotFound(error)) return;
      if (isAppError(error) && error.code === "not_found") throw badRequest(`defaultModel: ${error.message}`);
      throw error;
    }
  };

  worker.registerFunction(
    {
      id: "realm::create",
      description: "Create a realm (admin): {name, owner, ...}",
      input: createRealmInput,
      output: realmView,
    },
    async (input, ctx) => {
      requireAdmin(ctx);
      if (input.defaultModel) await checkModel(input.defaultModel);
      const now = nowIso();
      const realm: Realm = { id: newId("realm"), ...input, status: "Active", createdAt: now, updatedAt: now };
      await insertRealm(state, realm);
      publish({ type: "created", realmId: realm.id });
      return realm;
    },
  );

  worker.registerFunction(
    {
      id: "realm::list",
      description:
        "Every realm the caller may see, oldest first: {realms, nextCursor} (the route: a bare array)",
      input: z.strictObject(pageFields),
      output: realmPage,
    },
    async ({ limit, cursor }, ctx) => {
      const own = realmFilter(ctx);
      const realm = own === undefined ? undefined : await state.get<Realm>(REALMS_SCOPE, own);
      const realms = own === undefined ? await listRealms(state) : realm ? [realm] : [];
      const page = pageOf(realms, (entry) => oldestFirst(entry.createdAt, entry.id), { limit, cursor });
      return { realms: page.items, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    { id: "realm::get", description: "A realm by {id}", input: realmIdInput, output: realmView },
    ({ id }, ctx) => {
      assertRealmAccess(ctx, id);
      return readRealm(state, id);
    },
  );

  worker.registerFunction(
    {
      id: "realm::update",
      description: `Change a realm's ${UPDATABLE} (null clears); status moves Active⇄Paused, → Archived`,
      input: updateRealmInput,
      output: realmView,
    },
    async ({ id, ...patch }, ctx) => {
      assertRealmAccess(ctx, id);
      if (Object.values(patch).every((value) => value === undefined)) {
        throw badRequest(`Nothing to update: give at least one of ${UPDATABLE}`);
      }
      // A realm-bound key runs its own realm, but its agent quota and its status (pausing stops every
      // agent; archiving is for good) are the operator's controls: a tenant must not undo them.
      if (patch.maxAgents !== undefined && !isPrivileged(ctx.auth)) {
        throw forbidden("maxAgents can only be changed with an admin key");
      }
      if (patch.status !== undefined && !isPrivileged(ctx.auth)) {
        throw forbidden("A realm's status can only be changed with an admin key");
      }
      if (patch.defaultModel) await checkModel(patch.defaultModel);
      const { before, after } = await updateRealm(state, id, (realm) => {
        assertWritable(realm);
        if (patch.status) checkTransition(realm, patch.status);
        return patched(realm, patch);
      });
      const moved = before.status !== after.status ? { from: before.status, to: after.status } : {};
      publish({ type: "updated", realmId: id, ...moved });
      return after;
    },
  );

  worker.registerFunction(
    {
      id: "realm::delete",
      description: "Delete a realm (admin) with all its agents, directives, missions, budgets, pulses, ...",
      input: realmIdInput,
      output: realmDeleted,
    },
    async ({ id }, ctx) => {
      requireAdmin(ctx);
      if (id === DEFAULT_REALM_ID) throw conflict(`Realm ${DEFAULT_REALM_ID} cannot be deleted`);
      // Marked first: from here on every write into the realm is refused (and a write that raced with
      // the marker takes itself back), so nothing is created behind the purge. The marker is never
      // cleared: when a purge fails the realm stays read-only, half purged, with its delete pending;
      // purges are idempotent, so a retried DELETE finishes the job.
      await updateRealm(state, id, (realm) => (realm.deleting ? undefined : { ...realm, deleting: true }));
      await purgeRealmData(trigger, id);
      await state.delete(REALMS_SCOPE, id);
      publish({ type: "deleted", realmId: id });
      return { deleted: true };
    },
  );

  worker.registerFunction(
    {
      id: "realm::export",
      description: "A realm with its agents, directives and hierarchy; secrets only with scrubSecrets false",
      input: exportInput,
      output: exportAnswer,
    },
    async ({ id, scrubSecrets }, ctx) => {
      assertRealmAccess(ctx, id);
      if (!scrubSecrets && !isPrivileged(ctx.auth)) {
        throw forbidden("Exporting secrets (scrubSecrets: false) requires an admin key");
      }
      const realm = await readRealm(state, id);
      assertNotDeleting(realm);
      const doc = await exportRealm(trigger, realm, scrubSecrets);
      // A delete that began while the document was read may have purged some of it already.
      assertNotDeleting(await readRealm(state, id));
      return doc;
    },
  );

  worker.registerFunction(
    {
      id: "realm::import",
      description: "Create a realm from an export document {data, newOwner?} (admin): {imported, realmId}",
      input: importInput,
      output: realmImported,
    },
    async ({ data, newOwner }, ctx) => {
      requireAdmin(ctx);
      const realmId = await importRealm({ state, trigger, checkModel }, data, newOwner);
      publish({ type: "created", realmId });
      return { imported: true, realmId };
    },
  );

  worker.registerRoute("realm::create", "POST", "/api/realms", { status: 201 });
  worker.registerRoute("realm::list", "GET", "/api/realms", { array_list: "realms" });
  worker.registerRoute("realm::import", "POST", "/api/realms/import", { status: 201 });
  worker.registerRoute("realm::get", "GET", "/api/realms/:id");
  worker.registerRoute("realm::update", "PATCH", "/api/realms/:id");
  worker.registerRoute("realm::delete", "DELETE", "/api/realms/:id");
  worker.registerRoute("realm::export", "POST", "/api/realms/:id/export");

  return { ready: ensureDefaultRealm(state) };
}
