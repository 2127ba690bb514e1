import type { InvocationContext, Principal } from "../engine/types.ts";
import { forbidden, unauthorized } from "./errors.ts";

/** Admin keys and internal (system) calls may do anything. */
export function isPrivileged(auth: Principal): boolean {
  return auth.kind === "system" || auth.kind === "admin";
}

export function requireAdmin(ctx: InvocationContext): void {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an admin API key`);
  if (!isPrivileged(ctx.auth)) throw forbidden(`${ctx.functionId} requires an admin key`);
}

/** Every realm-scoped function calls this: a key bound to another realm is refused with 403. */
export function assertRealmAccess(ctx: InvocationContext, realmId: string): void {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  if (ctx.auth.kind === "realm" && ctx.auth.realmId !== realmId) {
    throw forbidden(`This API key is bound to realm ${ctx.auth.realmId} and cannot access realm ${realmId}`);
  }
}

/** The realm a listing should be limited to, or undefined when the caller may see every realm. */
export function realmFilter(ctx: InvocationContext): string | undefined {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  return ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
}
