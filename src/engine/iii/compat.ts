import { badRequest } from "../../shared/errors.ts";
import { isJsonObject } from "../../shared/json-object.ts";
import { stateClient } from "../state/client.ts";
import type { TriggerFn, TriggerRequest } from "../types.ts";

/** iii's `state::list {scope}` answers bare values; past this many we ask for the paginated form. */
export const MAX_BARE_LIST = 10_000;

/**
 * Calls from iii workers, made to look like iii's built-ins where our shapes differ
 * (reference/iii-protocol.md §10.1): `state::set` takes `data` as an alias of `value`, and
 * `state::list` with nothing but a scope answers an array of bare values. A worker that wants our
 * richer form (keys, versions, cursor) asks for it by passing `limit`, `cursor` or `prefix`.
 */
export function callFromWorker(trigger: TriggerFn, request: TriggerRequest): Promise<unknown> {
  const { function_id: id, payload } = request;
  if (!isJsonObject(payload)) return trigger(request);
  if (id === "state::set" && payload.value === undefined && payload.data !== undefined) {
    const { data, ...rest } = payload;
    return trigger({ ...request, payload: { ...rest, value: data } });
  }
  if (id === "state::list" && Object.keys(payload).every((key) => key === "scope")) {
    return bareValues(trigger, request, payload.scope);
  }
  return trigger(request);
}

async function bareValues(trigger: TriggerFn, request: TriggerRequest, scope: unknown): Promise<unknown[]> {
  if (typeof scope !== "string") return trigger(request) as Promise<unknown[]>;
  const state = stateClient((call) => trigger({ ...call, auth: request.auth }));
  const values: unknown[] = [];
  for await (const record of state.scan(scope)) {
    if (values.length === MAX_BARE_LIST) {
      throw badRequest(
        `state::list: scope ${scope} holds more than ${MAX_BARE_LIST} values; pass {limit, cursor} to page through it`,
      );
    }
    values.push(record.value);
  }
  return values;
}
