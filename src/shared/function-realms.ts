/**
 * A function the operator opened to some realms only (an integration file's `realms`) says so in its
 * registration's `metadata.realms`: another realm's key or agent neither calls it (the function refuses)
 * nor sees it listed, nor gets it as a tool (its description and schema may tell the realm's URLs).
 */
export function openToRealm(
  metadata: Record<string, unknown> | undefined,
  realmId: string | undefined,
): boolean {
  const realms = metadata?.realms;
  if (!Array.isArray(realms)) return true;
  return realmId !== undefined && realms.includes(realmId);
}
