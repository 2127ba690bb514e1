import { call, type OutputOf } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { ModelEntry } from "../../llm/types.ts";
import { AppError, badRequest, isAppError, isFunctionNotFound } from "../../shared/errors.ts";
import { matchesPattern } from "../../shared/function-pattern.ts";

/**
 * What an agent names is checked when it is written (issue #19), so a mistake is told at once instead of
 * at its first message: its models must exist and have a usable provider, its tools must name functions,
 * and its name must not be taken by a catalog model (which `/v1` would pick instead of the agent).
 */

/** A catalog model (id or alias) whose provider has a key (hosted) or is local: else 422 with what to set. */
export async function usableModel(
  trigger: TriggerFn,
  model: string | undefined,
  realmId: string,
): Promise<ModelEntry> {
  const entry =
    model === undefined
      ? await call(trigger, "catalog::default_model", {})
      : await call(trigger, "catalog::resolve", { model });
  await requireConfigured(trigger, entry, realmId);
  return entry;
}

/**
 * usableModel's entry as the name the agent stores: the catalog id when that id names the same model
 * again, else `<provider>/<model>`. An unlisted local model (`ollama/qwen3:8b`) has a bare id that names
 * no model at all (every later message was a 404), or another provider's model of the same id
 * (`ollama/gpt-4o` would have become the hosted gpt-4o).
 */
export async function usableModelName(
  trigger: TriggerFn,
  model: string | undefined,
  realmId: string,
): Promise<string> {
  const entry = await usableModel(trigger, model, realmId);
  const byId = await call(trigger, "catalog::resolve", { model: entry.id }).catch((error: unknown) => {
    if (isAppError(error) && !isFunctionNotFound(error)) return null;
    throw error;
  });
  return byId?.id === entry.id && byId.provider === entry.provider
    ? entry.id
    : `${entry.provider}/${entry.id}`;
}

/**
 * The provider of a model the agent names must be usable by the agent's realm: a key for a hosted one, the
 * operator's address for a local one outside the default realm (422 naming it).
 */
async function requireConfigured(
  trigger: TriggerFn,
  entry: { id: string; provider: string },
  realmId: string,
  field?: string,
): Promise<void> {
  const verdict = await call(trigger, "catalog::provider_configured", { id: entry.provider, realmId }).catch(
    (error: unknown): OutputOf<"catalog::provider_configured"> => {
      // A catalog without the check (an older remote one) leaves it to the first message.
      if (isFunctionNotFound(error)) return { configured: true };
      throw error;
    },
  );
  if (!verdict.configured) {
    const message = `Model ${entry.id} cannot be used yet. ${verdict.reason ?? ""}`.trim();
    throw new AppError("unprocessable", field ? `${field}: ${message}` : message, {
      reason: "provider_not_configured",
    });
  }
}

/**
 * An agent's `embeddingModel`: an embedding model of the catalog (id, alias, or `<provider>/<model>` of a
 * provider that offers embeddings) whose provider is usable. A name the catalog refuses (unknown, a chat
 * model, a provider without embeddings) is a 400 that names the field and repeats the catalog's reason.
 * Answers the name to store: the catalog id when it names the same model, else `<provider>/<model>`
 * (an unlisted model keeps its provider), so an alias and its id are one value.
 */
export async function usableEmbeddingModel(
  trigger: TriggerFn,
  model: string,
  realmId: string,
): Promise<string> {
  const { model: entry } = await call(trigger, "catalog::resolve_embedding", { model }).catch(
    (error: unknown) => {
      if (isAppError(error) && !isFunctionNotFound(error) && error.status >= 400 && error.status < 500) {
        const shown = `"${model.length > 200 ? `${model.slice(0, 200)}…` : model}"`;
        const named = error.message.includes(shown) ? error.message : `${shown}: ${error.message}`;
        throw new AppError("validation", `embeddingModel: ${named}`, { reason: error.reason });
      }
      throw error;
    },
  );
  await requireConfigured(trigger, entry, realmId, "embeddingModel");
  const byId = await call(trigger, "catalog::resolve_embedding", { model: entry.id }).catch((error) => {
    if (isAppError(error)) return null;
    throw error;
  });
  const sameModel = byId?.model.id === entry.id && byId.model.provider === entry.provider;
  return sameModel ? entry.id : `${entry.provider}/${entry.id}`;
}

/**
 * Each tool pattern must match a registered function, unless its namespace (the part before the first
 * `::`) has no function at all yet: that is a remote worker's or an integration's, which may connect
 * later. So `tool::nope` is refused (there are tool:: functions, none called nope), `mcp::github::*` is not.
 */
export async function checkTools(trigger: TriggerFn, patterns: readonly string[] | undefined): Promise<void> {
  if (!patterns?.length) return;
  const { ids } = await call(trigger, "engine::functions::ids", {});
  const namespaces = new Set(ids.map(namespaceOf));
  const unknown = patterns.filter(
    (pattern) =>
      !ids.some((id) => matchesPattern(pattern, id)) &&
      !pattern.startsWith("mcp::") &&
      !pattern.startsWith("http::") &&
      namespaces.has(namespaceOf(pattern)),
  );
  if (unknown.length > 0) {
    throw badRequest(
      `tools: ${unknown.map((pattern) => `"${pattern}"`).join(", ")} ${unknown.length === 1 ? "names" : "name"} no function; GET /api/functions lists them`,
    );
  }
}

const namespaceOf = (id: string) => id.split("::")[0] as string;

/** An agent named like a catalog id or alias would be unreachable by name on `/v1` (the model wins). */
export async function checkNameFree(trigger: TriggerFn, name: string): Promise<void> {
  const model = await call(trigger, "catalog::resolve", { model: name }).catch((error: unknown) => {
    if (isAppError(error) && error.status === 404) return null;
    if (isFunctionNotFound(error)) return null;
    throw error;
  });
  if (model) {
    throw badRequest(
      `name: "${name}" is a catalog model id or alias, so model "${name}" on /v1 would mean the model; choose another name`,
    );
  }
}
