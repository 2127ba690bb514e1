import { z } from "zod";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { conflict } from "../../shared/errors.ts";
import { noContent } from "../../shared/outputs.ts";
import { oldestFirst, pageFields, pageOf } from "../../shared/pagination.ts";
import { recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import type { KeyCache } from "./cache.ts";
import { createdKey, createKey, keyPage, listKeys, revokeKey, revokeRealmKeys } from "./keys.ts";

const createInput = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  realmId: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[A-Za-z0-9_.:-]+$/, "realmId must be a realm id (letters, digits, _ . : -)")
    .optional(),
});
const revokeInput = z.strictObject({ id: z.string().min(1).max(64) });
const purgeRealmInput = z.strictObject({ realmId: z.string().min(1).max(256) });

/**
 * API key management: auth::keys::create|list|revoke, admin keys only; and auth::purge_realm, the
 * keys' part of a realm delete (internal, no route).
 */
export function registerKeyFunctions(worker: WorkerClient, cache: KeyCache): void {
  const state = stateClient((request) => worker.trigger(request));

  worker.registerFunction(
    {
      id: "auth::keys::create",
      description: "Create an API key (admin, or bound to realmId); the key is shown only in this reply",
      input: createInput,
      output: createdKey,
    },
    async (input, ctx) => {
      requireAdmin(ctx);
      const { realmId } = input;
      if (realmId === undefined) return createKey(state, input);
      const trigger = worker.trigger.bind(worker);
      // A key for a realm that does not exist would be a key for whoever creates that realm later; one
      // for a realm being deleted would outlive it (its keys may be purged already).
      const realm = await requireRealm(trigger, realmId);
      if (realm?.deleting) throw conflict(`Realm ${realmId} is being deleted`);
      const created = await createKey(state, input);
      // A delete that began meanwhile may have purged the realm's keys before this one was stored:
      // then it is taken back (409, or 404 when the realm is gone), so no key outlives its realm.
      await recheckRealm(trigger, realmId, async () => {
        cache.evictHash((await revokeKey(state, created.id)).hash);
      });
      return created;
    },
  );
  worker.registerFunction(
    {
      id: "auth::keys::list",
      description: "List API keys, oldest first (never the keys themselves): {keys, nextCursor}",
      input: z.strictObject(pageFields),
      output: keyPage,
    },
    async ({ limit, cursor }, ctx) => {
      requireAdmin(ctx);
      const page = pageOf(await listKeys(state), (key) => oldestFirst(key.createdAt, key.id), {
        limit,
        cursor,
      });
      return { keys: page.items, nextCursor: page.nextCursor };
    },
  );
  worker.registerFunction(
    {
      id: "auth::keys::revoke",
      description: "Revoke an API key by id",
      input: revokeInput,
      output: noContent,
    },
    async ({ id }, ctx) => {
      requireAdmin(ctx);
      const revoked = await revokeKey(state, id);
      // At once on this node; other nodes and processes notice through the revocation epoch.
      cache.evictHash(revoked.hash);
      return undefined;
    },
  );

  worker.registerFunction(
    {
      id: "auth::purge_realm",
      description: "Revoke every API key bound to {realmId} (part of a realm delete); idempotent",
      input: purgeRealmInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      const revoked = await revokeRealmKeys(state, realmId);
      for (const record of revoked) cache.evictHash(record.hash);
      return { realmId, revoked: revoked.length };
    },
  );

  worker.registerTrigger({
    type: "http",
    function_id: "auth::keys::create",
    config: { api_path: "/api/keys", http_method: "POST", status: 201 },
  });
  worker.registerTrigger({
    type: "http",
    function_id: "auth::keys::list",
    config: { api_path: "/api/keys" },
  });
  worker.registerTrigger({
    type: "http",
    function_id: "auth::keys::revoke",
    config: { api_path: "/api/keys/:id", http_method: "DELETE" },
  });
}
