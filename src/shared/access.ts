import type { InvocationContext, Principal } from "../engine/types.ts";
import { forbidden, notFound, unauthorized } from "./errors.ts";

/** Admin keys and internal (system) calls may do anything. */
export function isPrivileged(auth: Principal): boolean {
  return auth.kind === "system" || auth.kind === "admin";
}

/** A key as records name who acted: `admin:<keyId>`, `realm:<keyId>`, else `system`. */
export function principalLabel(auth: Principal): string {
  if (auth.kind === "admin") return `admin:${auth.keyId}`;
  if (auth.kind === "realm") return `realm:${auth.keyId}`;
  return "system";
}

export function requireAdmin(ctx: InvocationContext): void {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an admin API key`);
  if (!isPrivileged(ctx.auth)) throw forbidden(`${ctx.functionId} requires an admin key`);
}

/**
 * Every realm-scoped function calls this. A key bound to another realm gets 404, as if nothing were
 * there (DESIGN §4: existence is not revealed): `hidden` is the message a missing resource would get;
 * without it the realm the caller named is said to be missing.
 */
export function assertRealmAccess(ctx: InvocationContext, realmId: string, hidden?: string): void {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  if (ctx.auth.kind === "realm" && ctx.auth.realmId !== realmId) {
    throw notFound(hidden ?? `Realm ${realmId} not found (this API key sees only realm ${ctx.auth.realmId})`);
  }
}

/** The realm every service starts with; admin keys that name no realm work in it. */
export const DEFAULT_REALM_ID = "realm-default";

/**
 * The realm a call works in: the one it names (checked against the key), else the key's own realm, else
 * (admin keys and the service) the default realm.
 */
export function callerRealm(ctx: InvocationContext, requested?: string): string {
  if (requested !== undefined) {
    assertRealmAccess(ctx, requested);
    return requested;
  }
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  return ctx.auth.kind === "realm" ? ctx.auth.realmId : DEFAULT_REALM_ID;
}

/** The realm a listing should be limited to, or undefined when the caller may see every realm. */
export function realmFilter(ctx: InvocationContext): string | undefined {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  return ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
}
