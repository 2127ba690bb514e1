import { badRequest } from "../../shared/errors.ts";
import { andThen } from "../../shared/maybe-promise.ts";
import type { Engine } from "../engine.ts";
import { decodeCursor, encodeCursor } from "./keys.ts";
import {
  stateBatchInput,
  stateDeleteInput,
  stateGetInput,
  stateListGroupsInput,
  stateListInput,
  stateSetInput,
  stateUpdateInput,
} from "./schema.ts";
import type { StateStore } from "./types.ts";
import { wroteScope } from "./watch.ts";

/** Registers state::get|set|delete|list|update over one store; every other worker reaches state through them. */
export function registerStateFunctions(engine: Engine, store: StateStore): void {
  const worker = engine.worker("state", `Key-value state (${store.kind})`);

  worker.registerFunction(
    {
      id: "state::get",
      description: "Read a value; null when missing. withVersion: {value, version, updatedAt}",
      input: stateGetInput,
    },
    ({ scope, key, withVersion }) =>
      andThen(store.get(scope, key), (record) => {
        if (!record) return null;
        return withVersion
          ? { value: record.value, version: record.version, updatedAt: record.updatedAt }
          : record.value;
      }),
  );

  worker.registerFunction(
    {
      id: "state::set",
      description: "Write a value; with expectedVersion only when the stored version matches (0 = absent)",
      input: stateSetInput,
    },
    ({ scope, key, value, expectedVersion }) =>
      andThen(store.set(scope, key, value, expectedVersion), ({ old, record }) => {
        wroteScope(scope);
        return { old_value: old?.value ?? null, new_value: record.value, version: record.version };
      }),
  );

  worker.registerFunction(
    {
      id: "state::delete",
      description: "Delete a key; returns the previous value or null",
      input: stateDeleteInput,
    },
    ({ scope, key, expectedVersion }) =>
      andThen(store.delete(scope, key, expectedVersion), (old) => {
        // A delete of nothing (an absence guard) changes nothing a reader kept.
        if (old) wroteScope(scope);
        return old?.value ?? null;
      }),
  );

  worker.registerFunction(
    {
      id: "state::list",
      description: "List records of a scope in key order, filtered by prefix, paginated by cursor",
      input: stateListInput,
    },
    ({ scope, prefix, limit, cursor }) => {
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (after === null) throw badRequest("cursor: not a cursor returned by state::list");
      return andThen(store.list(scope, { prefix, after, limit }), (page) => ({
        items: page.items,
        nextCursor: page.lastKey === null ? null : encodeCursor(page.lastKey),
      }));
    },
  );

  worker.registerFunction(
    {
      id: "state::list_groups",
      description: "Every scope holding at least one key: {groups} (as iii answers it)",
      input: stateListGroupsInput,
    },
    () => andThen(store.listScopes(), (groups) => ({ groups })),
  );

  worker.registerFunction(
    {
      id: "state::batch",
      description:
        "Several set/update/delete ops in one transaction: all applied in order, or none (a conflict fails all)",
      input: stateBatchInput,
    },
    ({ ops }) =>
      andThen(store.batch(ops), (results) => {
        ops.forEach((op, index) => {
          if (op.type !== "delete" || results[index]?.old) wroteScope(op.scope);
        });
        return {
          results: results.map(({ old, record, errors }) => ({
            old_value: old?.value ?? null,
            new_value: record?.value ?? null,
            version: record?.version ?? 0,
            ...(errors && errors.length > 0 ? { errors } : {}),
          })),
        };
      }),
  );

  worker.registerFunction(
    {
      id: "state::update",
      description: "Apply set/merge/increment/decrement/append/remove ops atomically",
      input: stateUpdateInput,
    },
    ({ scope, key, ops, expectedVersion }) =>
      andThen(store.update(scope, key, ops, expectedVersion), ({ old, record, errors }) => {
        wroteScope(scope);
        return {
          old_value: old?.value ?? null,
          new_value: record.value,
          version: record.version,
          ...(errors.length > 0 ? { errors } : {}),
        };
      }),
  );
}
