import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, resolve, sep } from "node:path";
import { AppError } from "../../shared/errors.ts";

/**
 * The directories a migration may read: the service's home, the home directory of the user it runs as
 * (where the frameworks keep their configuration), and AGENTOS_MIGRATE_ROOTS. Anything else is refused,
 * so an admin key cannot make the service read arbitrary files.
 */
export function allowedRoots(home: string, extra: string | undefined): string[] {
  return [home, homedir(), ...(extra ?? "").split(delimiter)].filter(Boolean).map((root) => resolve(root));
}

/** The real path of `path` when it exists inside an allowed root; a clear 4xx otherwise. */
export function checkReadable(path: string, roots: string[], field = "configPath"): string {
  let real: string;
  try {
    real = realpathSync(resolve(path));
  } catch {
    throw new AppError("not_found", `${field}: ${path} does not exist`);
  }
  const inside = roots.some((root) => {
    let base: string;
    try {
      base = realpathSync(root);
    } catch {
      return false;
    }
    return real === base || real.startsWith(base + sep);
  });
  if (!inside)
    throw new AppError(
      "forbidden",
      `${field}: ${path} is outside the directories a migration may read (${roots.join(", ")}); add it to AGENTOS_MIGRATE_ROOTS`,
    );
  return real;
}
