import { call } from "../../engine/call.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { noContent } from "../../shared/outputs.ts";
import {
  secretEntry,
  secretInfo,
  secretList,
  vaultKeyInput,
  vaultListInput,
  vaultSetInput,
} from "./schema.ts";
import { deleteSecret, getSecret, listSecrets, setSecret } from "./vault.ts";

export interface VaultDeps {
  /** The 32-byte AES key, from loadVaultKey (./key.ts). */
  key: Buffer;
}

/**
 * Encrypted secrets (provider keys, channel signing secrets). Every function is for admins and
 * internal callers only; vault::get has no HTTP route, so a secret never leaves through the API.
 */
export function register(worker: WorkerClient, deps: VaultDeps): void {
  const state = stateClient((request) => worker.trigger(request));

  // Fire-and-forget: a failing audit must not fail the change it records (the engine logs the failure).
  const audit = (type: string, name: string, ctx: InvocationContext) =>
    void call(
      worker.trigger.bind(worker),
      "security::audit",
      { type, detail: { key: name, actor: actorOf(ctx) } },
      { action: { type: "void" } },
    );

  worker.registerFunction(
    {
      id: "vault::set",
      description: "Store a secret {key, value}, encrypted; returns {key, createdAt, updatedAt}",
      input: vaultSetInput,
      output: secretInfo,
    },
    async ({ key, value }, ctx) => {
      requireAdmin(ctx);
      const info = await setSecret(state, deps.key, key, value);
      audit("vault_set", key, ctx);
      return info;
    },
  );

  worker.registerFunction(
    {
      id: "vault::get",
      description: "Decrypt a secret: {key, value}, or null when missing (internal/admin only)",
      input: vaultKeyInput,
      output: secretEntry,
    },
    ({ key }, ctx) => {
      requireAdmin(ctx);
      return getSecret(state, deps.key, key);
    },
  );

  worker.registerFunction(
    {
      id: "vault::list",
      description: "Secret names and timestamps (never values)",
      input: vaultListInput,
      output: secretList,
    },
    ({ prefix }, ctx) => {
      requireAdmin(ctx);
      return listSecrets(state, prefix);
    },
  );

  worker.registerFunction(
    { id: "vault::delete", description: "Delete a secret", input: vaultKeyInput, output: noContent },
    async ({ key }, ctx) => {
      requireAdmin(ctx);
      await deleteSecret(state, key);
      audit("vault_delete", key, ctx);
      return undefined;
    },
  );

  worker.registerTrigger({
    type: "http",
    function_id: "vault::list",
    config: { api_path: "/api/vault", http_method: "GET" },
  });
  worker.registerTrigger({
    type: "http",
    function_id: "vault::set",
    config: { api_path: "/api/vault", http_method: "POST", status: 201 },
  });
  worker.registerTrigger({
    type: "http",
    function_id: "vault::delete",
    config: { api_path: "/api/vault/:key", http_method: "DELETE" },
  });
}

/** Who made the change, for the audit record: "system" or "<kind>:<api key id>". */
function actorOf(ctx: InvocationContext): string {
  return "keyId" in ctx.auth ? `${ctx.auth.kind}:${ctx.auth.keyId}` : ctx.auth.kind;
}
