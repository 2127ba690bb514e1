import { randomUUID } from "node:crypto";
import { nowMs } from "./clock.ts";

/**
 * The one id generator: `<prefix>-<uuid>` (spec formats such as `realm-<uuid>`, `run-<uuid>`). The uuid
 * is a version 7 one (RFC 9562): the creation time in milliseconds, then 74 random bits. Records keyed
 * by such ids are written in key order, so a busy service appends to the same few pages of each table
 * and index instead of dirtying a random page per record (issue #14: a third fewer pages written per
 * agent turn); ids are names, never secrets (keys and tokens come from randomBytes).
 */
export function newId(prefix?: string): string {
  const id = uuidV7();
  return prefix ? `${prefix}-${id}` : id;
}

function uuidV7(): string {
  // A v4 uuid supplies the random bits and the variant; its first 48 bits and version become v7's.
  return `${timePrefix()}7${randomUUID().slice(15)}`;
}

/** `tttttttt-tttt-` of the current millisecond, written once per millisecond (ids come in bursts). */
let lastPrefix = { ms: Number.NaN, text: "" };

function timePrefix(): string {
  const ms = nowMs();
  if (ms !== lastPrefix.ms) {
    const time = ms.toString(16).padStart(12, "0");
    lastPrefix = { ms, text: `${time.slice(0, 8)}-${time.slice(8, 12)}-` };
  }
  return lastPrefix.text;
}
