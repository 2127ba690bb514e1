import type { Envelope, Reply } from "../../channels/envelope.ts";
import { refused } from "../../channels/envelope.ts";
import {
  genericCallback,
  genericText,
  genericVaultName,
  verifyGenericSignature,
} from "../../channels/generic.ts";
import { call } from "../../engine/call.ts";
import type { Principal } from "../../engine/types.ts";
import { isAppError } from "../../shared/errors.ts";
import { guardedRequest, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import { vaultSecret } from "../../shared/vault-secret.ts";
import { bindingOf, type ChannelDeps, DEFAULT_AGENT, firstTime } from "./pipeline.ts";

export const PLACEHOLDER = "[Unrecognized webhook payload]";

/**
 * `POST /webhook/:channelId` (spec: Channel webhooks, rules 1–6). Accepted with a valid API key (the
 * caller), or with `X-Signature-256` under the channel's vault secret `channel:<channelId>:secret`
 * (verifyGenericSignature: of the raw body, or timestamped and taken once); anything else is a 401 and
 * runs no turn.
 */
export async function inbound(
  deps: ChannelDeps & { policy: NetworkPolicy },
  envelope: Envelope,
  caller: Principal,
): Promise<Reply> {
  const query = envelope.query_params as Record<string, unknown>;
  const channelId =
    envelope.path_params.channelId || (typeof query.channel === "string" && query.channel) || "default";
  if (caller.kind === "anonymous") {
    const key = await vaultSecret(deps.trigger, genericVaultName(channelId));
    const proof = key
      ? verifyGenericSignature(envelope, key, Date.now())
      : { problem: "Send an API key, or X-Signature-256 when the channel has a secret in the vault" };
    if (proof.problem !== null) return refused(proof.problem);
    // A timestamped signature is taken once: a captured request sent again within the window is refused.
    if (proof.once && !(await firstTime(deps.state, `webhook:${channelId}:${proof.once}`))) {
      return refused("This signed request was already received (X-Signature-Timestamp): sign each one anew");
    }
  }
  const body = envelope.body;
  if (body !== null && body !== undefined && (typeof body !== "object" || Array.isArray(body))) {
    return { status_code: 415, body: { error: "Send a JSON object or form data" } };
  }
  const fields = (body ?? {}) as Record<string, unknown>;
  const text = genericText(fields);
  const bound = await bindingOf(deps, "webhook", channelId);
  // A key of another realm than the binding's finds the channel as if it were unbound (its default agent).
  const { agentId, realmId } =
    caller.kind === "realm" && bound.realmId !== caller.realmId
      ? { agentId: DEFAULT_AGENT, realmId: caller.realmId }
      : bound;
  let content: string;
  try {
    const answer = await call(
      deps.trigger,
      "agent::chat",
      { agentId, message: text ?? PLACEHOLDER, sessionId: `webhook:${channelId}` },
      {
        auth:
          caller.kind === "anonymous"
            ? { kind: "realm", realmId, keyId: `channel:webhook:${channelId}` }
            : caller,
      },
    );
    content = answer.content;
  } catch (error) {
    if (isAppError(error)) return { status_code: error.status, body: { error: error.message } };
    throw error;
  }
  const callback = genericCallback(fields);
  if (callback) void postBack(callback, content, { ...deps.policy, realm: realmId });
  return { status_code: 200, body: { response: content } };
}

/** The reply POSTed as `{text}` under the SSRF rule, 30 s at most; failures are ignored (spec rule 5). */
async function postBack(url: string, text: string, policy: NetworkPolicy): Promise<void> {
  try {
    await guardedRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
      maxBytes: 64 * 1024,
      timeoutMs: 30_000,
      policy,
    });
  } catch {
    // Ignored, as the spec says: the caller already has the reply in the response.
  }
}
