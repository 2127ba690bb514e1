/**
 * Source model names → catalog ids of the same vendor, so a project keeps the provider (and the key) it
 * already uses. Provider prefixes (`openai/`, `openai:`, `anthropic/`, `models/`) and date suffixes are
 * dropped first. A name no rule knows is kept in the report and the agent uses the realm's default.
 */
const RULES: Array<[RegExp, string]> = [
  [/^gpt-4\.1-(mini|nano)/, "gpt-4o-mini"],
  [/^gpt-4\.1/, "gpt-4.1"],
  [/^gpt-4o-mini/, "gpt-4o-mini"],
  [/^gpt-3\.5/, "gpt-4o-mini"],
  [/^(gpt-4o|gpt-4-turbo|gpt-4|chatgpt-4o)/, "gpt-4o"],
  [/^(o1-mini|o3-mini|o4-mini)/, "o4-mini"],
  [/^(o1|o3)(-|$)/, "o3"],
  [/^claude-(3-opus|opus|3-5-opus|opus-4)/, "claude-opus-4-6"],
  [/^claude-(3-haiku|3-5-haiku|haiku|haiku-4)/, "claude-haiku-4-5"],
  [/^claude-(3-sonnet|3-5-sonnet|3\.5-sonnet|3-7-sonnet|sonnet|sonnet-4)/, "claude-sonnet-4-6"],
  [/^claude-(instant|2)/, "claude-haiku-4-5"],
  [/^gemini-(pro|1\.0-pro|1\.5-pro|2\.0-pro|2\.5-pro)/, "gemini-2.5-pro"],
  [/^gemini-(1\.5-flash|2\.0-flash|2\.5-flash|flash)/, "gemini-2.5-flash"],
  [/^deepseek-(r1|reasoner)/, "deepseek-reasoner"],
  [/^deepseek-(chat|v3|v2)/, "deepseek-chat"],
  [/^(meta-llama\/)?(llama-?3|llama3)/, "llama-3.3-70b"],
  [/^(mixtral|mistral-large|mistral-medium|open-mixtral)/, "mistral-large"],
  [/^command-r-plus/, "command-r-plus"],
  [/^command-r/, "command-r"],
  [/^command/, "command-a"],
  [/^grok-3-mini/, "grok-3-mini"],
  [/^grok-3/, "grok-3"],
  [/^grok/, "grok-2"],
  [/^qwen-(max|plus|turbo)/, "qwen-$1"],
  [/^sonar-pro/, "sonar-pro"],
  [/^sonar/, "sonar"],
];

/** The name without the provider prefix and in lower case: `openai:gpt-4o` → `gpt-4o`. */
export function normalizeModelName(name: string): string {
  const bare = name.trim().toLowerCase();
  const slash = bare.match(
    /^(openai|anthropic|google|gemini|models|groq|mistral|mistralai|deepseek|xai|cohere|together|openrouter|bedrock|azure|ollama|meta-llama)[/:](.+)$/,
  );
  return slash ? (slash[2] as string) : bare;
}

/** The catalog id for a source model, or undefined when no rule knows it. */
export function mapModel(name: string, catalog: ReadonlySet<string>): string | undefined {
  const bare = normalizeModelName(name);
  if (catalog.has(bare)) return bare;
  for (const [pattern, target] of RULES) {
    const match = bare.match(pattern);
    if (!match) continue;
    const id = target.replace("$1", match[1] ?? "");
    return catalog.has(id) ? id : undefined;
  }
  return undefined;
}

/** Every target of the table (a test asserts each is a catalog id). */
export function modelTargets(): string[] {
  const targets = new Set<string>();
  for (const [, target] of RULES) {
    if (target.includes("$1"))
      for (const size of ["max", "plus", "turbo"]) targets.add(target.replace("$1", size));
    else targets.add(target);
  }
  return [...targets].sort();
}
