import type { TriggerFn } from "../../engine/types.ts";
import { generate } from "../../llm/generate.ts";
import { nowMs } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import type { Catalog } from "./catalog.ts";
import { type ProviderTestResult, TIERS } from "./schema.ts";

/**
 * A one-token request to the provider's cheapest-tier model: proves the key (or the local endpoint)
 * works end to end. A failure is a result (`ok: false` with the reason), not an error.
 */
export async function testProvider(
  catalog: Catalog,
  providerId: string,
  deps: { env: NodeJS.ProcessEnv; trigger: TriggerFn },
): Promise<ProviderTestResult> {
  const provider = catalog.providers.find((entry) => entry.id === providerId);
  if (!provider) throw notFound(`Unknown provider "${providerId}": GET /api/providers lists them`);
  const models = catalog.models.filter((model) => model.provider === providerId);
  const model = [...models].sort((a, b) => TIERS.indexOf(b.tier) - TIERS.indexOf(a.tier))[0];
  if (!model) throw notFound(`Provider ${providerId} has no model in the catalog to test with`);
  const started = nowMs();
  try {
    await generate({
      choices: [{ model, provider }],
      messages: [{ role: "user", content: "ping" }],
      maxTokens: 1,
      maxRetries: 0,
      timeoutMs: 15_000,
      env: deps.env,
      trigger: deps.trigger,
    });
    return { provider: providerId, ok: true, latencyMs: nowMs() - started, model: model.id };
  } catch (error) {
    return {
      provider: providerId,
      ok: false,
      latencyMs: nowMs() - started,
      model: model.id,
      error: (error as Error).message,
    };
  }
}
