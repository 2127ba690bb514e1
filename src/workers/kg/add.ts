import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import type { GraphStats } from "./aggregates.ts";
import type { AddInput, EntityHead, EntityVersion, Relation } from "./schema.ts";
import {
  headsScope,
  incomingKey,
  incomingScope,
  realmGraphsScope,
  sameRelation,
  versionKey,
  versionsScope,
} from "./store.ts";

const MAX_ATTEMPTS = 32;

/**
 * Adds the next version of an entity (the first add is version 1; DESIGN §5): the previous version
 * closes (`validUntil` = the new `validFrom`, which is always later), relations to entities that do not
 * exist yet create them as stubs (`type: "unknown"`, version 0, no versions until they are added), and
 * the incoming index learns each new source, and the graph's totals count what changed (aggregates.ts).
 * One transaction, conditional on the head read, so concurrent adds of one entity each get their own
 * version and none is lost or counted twice.
 */
export async function addVersion(
  state: StateClient,
  graphs: GraphStats,
  realmId: string,
  input: AddInput,
): Promise<EntityVersion> {
  const relations = distinct(input.relations);
  await graphs.prepare(input.agentId);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const found = await state.getVersioned<EntityHead>(headsScope(input.agentId), input.entity);
    const head = found?.value ?? null;
    const validFrom = Math.max(nowMs(), (head?.validFrom ?? 0) + 1);
    const version: EntityVersion = {
      entity: input.entity,
      type: input.type,
      properties: input.properties,
      relations,
      version: (head?.version ?? 0) + 1,
      validFrom,
      validUntil: null,
    };
    const ops: BatchOp[] = [
      {
        type: "set",
        scope: headsScope(input.agentId),
        key: input.entity,
        value: headOf(version),
        expectedVersion: found?.version ?? 0,
      },
      {
        type: "set",
        scope: versionsScope(input.agentId),
        key: versionKey(input.entity, version.version),
        value: version,
      },
      {
        type: "set",
        scope: realmGraphsScope(realmId),
        key: input.agentId,
        value: { agentId: input.agentId },
      },
    ];
    if (head && !head.stub) {
      ops.push({
        type: "update",
        scope: versionsScope(input.agentId),
        key: versionKey(input.entity, head.version),
        ops: [{ type: "set", path: "validUntil", value: validFrom }],
      });
    }
    const links = await linkOps(
      state,
      input.agentId,
      input.entity,
      relations,
      head?.relations ?? [],
      validFrom,
    );
    const stubs = links.filter((op) => op.scope === headsScope(input.agentId)).length;
    // The incoming-index entries go first, in a transaction of their own: with a stub and an entry per
    // new target, 200 relations to new entities were 400+ writes, past what one transaction takes
    // (MAX_BATCH_OPS), and every add of more than 126 of them failed. An entry whose add then fails is
    // harmless: the index names who may relate to a target, and readers check the source's relations.
    const entries = links.filter((op) => op.scope === incomingScope(input.agentId));
    if (entries.length > 0) await state.batch(entries);
    ops.push(
      ...links.filter((op) => op.scope !== incomingScope(input.agentId)),
      graphs.countOp(input.agentId, (head ? 0 : 1) + stubs, relations.length - (head?.relations.length ?? 0)),
    );
    const done = graphs.begin(input.agentId);
    try {
      await state.batch(ops);
      done({
        entity: input.entity,
        version: version.version,
        targets: relations.map((relation) => relation.target),
      });
      return version;
    } catch (error) {
      done();
      // Another add of this entity, or a stub created meanwhile: read again and redo.
      if (!isConflict(error)) throw error;
    }
  }
  throw new AppError("unavailable", `Too many concurrent adds of entity ${input.entity}; try again`);
}

/** Incoming-index entries for new relations, and stub heads for targets that do not exist yet. */
async function linkOps(
  state: StateClient,
  agentId: string,
  source: string,
  relations: Relation[],
  previous: Relation[],
  now: number,
): Promise<BatchOp[]> {
  const ops: BatchOp[] = [];
  const fresh = relations.filter((relation) => !previous.some((old) => sameRelation(old, relation)));
  const targets = [...new Set(fresh.map((relation) => relation.target))].filter(
    (target) => target !== source,
  );
  for (const target of targets) {
    ops.push({
      type: "set",
      scope: incomingScope(agentId),
      key: incomingKey(target, source),
      value: { source },
    });
    if (await state.get(headsScope(agentId), target)) continue;
    const stub: EntityHead = {
      entity: target,
      type: "unknown",
      version: 0,
      validFrom: now,
      relations: [],
      stub: true,
    };
    ops.push({ type: "set", scope: headsScope(agentId), key: target, value: stub, expectedVersion: 0 });
  }
  if (fresh.some((relation) => relation.target === source)) {
    ops.push({
      type: "set",
      scope: incomingScope(agentId),
      key: incomingKey(source, source),
      value: { source },
    });
  }
  return ops;
}

function headOf(version: EntityVersion): EntityHead {
  const { entity, type, version: number, validFrom, relations } = version;
  return { entity, type, version: number, validFrom, relations };
}

function distinct(relations: Relation[]): Relation[] {
  const kept: Relation[] = [];
  for (const relation of relations)
    if (!kept.some((other) => sameRelation(other, relation))) kept.push(relation);
  return kept;
}
