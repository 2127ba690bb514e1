import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { type FileProblem, readTomlFile } from "../../shared/toml-file.ts";
import { type IntegrationFile, integrationFile, toolSegment } from "./schema.ts";

export interface DeclaredIntegration {
  file: string;
  name: string;
  config: IntegrationFile;
}

/** `integrations/*.toml` under home: each file on its own, a bad one a problem naming it. */
export function readIntegrations(home: string): {
  integrations: DeclaredIntegration[];
  problems: FileProblem[];
} {
  const dir = join(home, "integrations");
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((entry) => entry.endsWith(".toml"))
      .sort();
  } catch {
    names = [];
  }
  const integrations: DeclaredIntegration[] = [];
  const problems: FileProblem[] = [];
  const seen = new Map<string, string>();
  for (const entry of names) {
    const file = join(dir, entry);
    const { value, problem } = readTomlFile(file, integrationFile);
    if (problem || !value) {
      problems.push(problem ?? { file, message: "unreadable" });
      continue;
    }
    const name = value.name ?? basename(entry, ".toml");
    if (!toolSegment.safeParse(name).success) {
      problems.push({ file, message: `name: ${name} must be 1-64 letters, digits, _, . or -` });
      continue;
    }
    const earlier = seen.get(name);
    if (earlier) {
      problems.push({ file, message: `name: integration ${name} is already declared by ${earlier}` });
      continue;
    }
    seen.set(name, file);
    integrations.push({ file, name, config: value });
  }
  return { integrations, problems };
}
