/**
 * Source tool names → our functions. Names are compared in snake case (`TavilySearchResults` →
 * `tavily_search_results`, `read-file` → `read_file`). The spec's table first, then the names the six
 * frameworks' own tool classes and built-ins use; a name that is already one of our tools (`file_read`
 * for `tool::file_read`) maps to it. Anything else becomes an integration to provide.
 */
const TABLE: Record<string, string[]> = {
  // The spec's mapping.
  web_search: ["tool::web_search"],
  google_search: ["tool::web_search"],
  file_read: ["tool::file_read"],
  read_file: ["tool::file_read"],
  file_write: ["tool::file_write"],
  write_file: ["tool::file_write"],
  shell: ["tool::shell_exec"],
  terminal: ["tool::shell_exec"],
  python_repl: ["tool::shell_exec"],
  code_interpreter: ["tool::shell_exec"],
  memory: ["memory::store", "memory::recall"],
  retriever: ["memory::recall"],
  // Search tools of LangChain, CrewAI and AutoGen.
  serpapi: ["tool::web_search"],
  serper_dev_tool: ["tool::web_search"],
  google_serper_run: ["tool::web_search"],
  google_search_run: ["tool::web_search"],
  tavily_search_results: ["tool::web_search"],
  tavily_search: ["tool::web_search"],
  tavily_search_tool: ["tool::web_search"],
  duck_duck_go_search_run: ["tool::web_search"],
  duckduckgo_search_run: ["tool::web_search"],
  duckduckgo_search: ["tool::web_search"],
  brave_search: ["tool::web_search"],
  bing_search: ["tool::web_search"],
  bing_search_run: ["tool::web_search"],
  exa_search_tool: ["tool::web_search"],
  // Fetching and scraping.
  scrape_website_tool: ["tool::web_fetch"],
  scrape_website: ["tool::web_fetch"],
  requests_get_tool: ["tool::web_fetch"],
  wikipedia: ["tool::web_fetch"],
  wikipedia_query_run: ["tool::web_fetch"],
  fetch: ["tool::web_fetch"],
  // Files.
  file_read_tool: ["tool::file_read"],
  read_file_tool: ["tool::file_read"],
  file_writer_tool: ["tool::file_write"],
  write_file_tool: ["tool::file_write"],
  directory_read_tool: ["tool::file_list"],
  list_directory_tool: ["tool::file_list"],
  list_directory: ["tool::file_list"],
  // Shells and code.
  shell_tool: ["tool::shell_exec"],
  bash: ["tool::shell_exec"],
  python_repl_tool: ["tool::shell_exec"],
  code_interpreter_tool: ["tool::shell_exec"],
  python_code_execution_tool: ["tool::shell_exec"],
  // OpenClaw's built-in tools.
  read: ["tool::file_read"],
  write: ["tool::file_write"],
  edit: ["tool::apply_patch"],
  apply_patch: ["tool::apply_patch"],
  exec: ["tool::shell_exec"],
  browser: ["tool::browser_navigate", "tool::browser_read_page", "tool::browser_screenshot"],
  cron: ["tool::cron_create", "tool::cron_list", "tool::cron_delete"],
  message: ["tool::channel_send"],
  // OpenFang's names that differ from ours.
  schedule_create: ["tool::cron_create"],
  schedule_list: ["tool::cron_list"],
  schedule_delete: ["tool::cron_delete"],
  knowledge_add_entity: ["tool::kg_add"],
  knowledge_add_relation: ["tool::kg_add"],
  knowledge_query: ["tool::kg_query"],
};

export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toLowerCase();
}

/** Our functions for a source tool, or undefined when it must become an integration. */
export function mapTool(name: string, registered: ReadonlySet<string>): string[] | undefined {
  const key = snakeCase(name);
  const mapped = TABLE[key] ?? TABLE[key.replace(/_tool$/, "")];
  if (mapped) return mapped.filter((id) => registered.has(id));
  for (const id of [`tool::${key}`, `tool::${key.replace(/_tool$/, "")}`])
    if (registered.has(id)) return [id];
  return undefined;
}

/** Every function the table maps to (a test asserts each is registered). */
export function toolTargets(): string[] {
  return [...new Set(Object.values(TABLE).flat())].sort();
}
