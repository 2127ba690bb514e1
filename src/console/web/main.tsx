import type { ComponentType } from "preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, apiKey } from "./api.ts";
import { AgentsPage } from "./pages/agents.tsx";
import { href, type Route, useRoute } from "./router.ts";
import type { Answer } from "./types.ts";
import { Problem, useLoad } from "./ui.tsx";

type Who = Answer<"api::whoami">;

const PAGES = [
  ["agents", "Agents"],
  ["workflows", "Workflows"],
  ["realms", "Realms"],
  ["graph", "Graph"],
  ["operations", "Operations"],
  ["migrate", "Migrate"],
] as const;

function App() {
  const [key, setKey] = useState(apiKey.get());
  const who = useLoad(() => (key ? api<Who>("/api/whoami") : Promise.resolve(undefined)), [key]);
  const route = useRoute();
  const logout = () => {
    apiKey.clear();
    setKey(null);
  };
  if (!key || (who.error && /401|key/i.test(who.error))) {
    const login = (value: string) => {
      apiKey.set(value);
      setKey(value);
    };
    return <Login error={key ? who.error : undefined} onKey={login} />;
  }
  if (!who.value) return who.error ? <Problem error={who.error} /> : <p class="loading">Loading…</p>;
  return (
    <div class="shell">
      <nav class="top">
        <a class="brand" href={href("agents")}>
          AgentOS
        </a>
        {PAGES.filter(([page]) => page !== "migrate" || who.value?.kind === "admin").map(([page, label]) => (
          <a key={page} href={href(page)} class={route.page === page ? "current" : ""}>
            {label}
          </a>
        ))}
        <span class="who">
          {who.value.kind === "admin" ? "admin key" : `realm key · ${who.value.realmId}`}
        </span>
        <button type="button" class="link" onClick={logout}>
          Log out
        </button>
      </nav>
      <main>
        <Current route={route} admin={who.value.kind === "admin"} />
      </main>
    </div>
  );
}

/** Every page but the agents list is loaded the first time it is opened: the first page needs a third of the modules. */
// biome-ignore lint/suspicious/noExplicitAny: each page takes its own props, given by pageOf below
const PAGE_MODULES: Record<string, () => Promise<ComponentType<any>>> = {
  agent: () => import("./pages/agent.tsx").then((m) => m.AgentPage),
  workflows: () => import("./pages/workflows.tsx").then((m) => m.WorkflowsPage),
  workflow: () => import("./pages/workflows.tsx").then((m) => m.WorkflowPage),
  run: () => import("./pages/run.tsx").then((m) => m.RunPage),
  operations: () => import("./pages/operations.tsx").then((m) => m.OperationsPage),
  graph: () => import("./pages/graph.tsx").then((m) => m.GraphPage),
  realms: () => import("./pages/realms.tsx").then((m) => m.RealmsPage),
  plane: () => import("./pages/plane.tsx").then((m) => m.PlanePage),
  migrate: () => import("./pages/migrate.tsx").then((m) => m.MigratePage),
};

/** The page a route shows and its props, or null when there is no such page. */
function pageOf(route: Route, admin: boolean): [string, Record<string, unknown>] | null {
  const { page, id, sub } = route;
  if (page === "agents") return id ? ["agent", { id }] : ["agents", {}];
  if (page === "workflows") return id ? ["workflow", { id, realmId: sub }] : ["workflows", {}];
  if (page === "runs" && id) return ["run", { id }];
  if (page === "operations" || page === "realms" || page === "migrate") return [page, { admin }];
  if (page === "graph") return ["graph", {}];
  if (page === "plane" && id) return ["plane", { realmId: id, tab: sub }];
  return null;
}

function Current(props: { route: Route; admin: boolean }) {
  const shown = pageOf(props.route, props.admin);
  if (!shown) return <Problem error={`There is no page ${props.route.page}: pick one above.`} />;
  const [name, pageProps] = shown;
  if (name === "agents") return <AgentsPage />;
  return <LazyPage name={name} props={pageProps} />;
}

function LazyPage(props: { name: string; props: Record<string, unknown> }) {
  const [loaded, setLoaded] = useState<{ name: string; Page: ComponentType<Record<string, unknown>> }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let current = true;
    PAGE_MODULES[props.name]?.().then(
      (Page) => current && setLoaded({ name: props.name, Page }),
      (caught: Error) => current && setError(`The page could not be loaded: ${caught.message}`),
    );
    return () => {
      current = false;
    };
  }, [props.name]);
  if (error) return <Problem error={error} />;
  if (loaded?.name !== props.name) return <p class="loading">Loading…</p>;
  return <loaded.Page {...props.props} />;
}

function Login(props: { error?: string; onKey: (key: string) => void }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get("key") ?? "").trim();
    if (value) props.onKey(value);
  };
  return (
    <form class="login" onSubmit={submit}>
      <h1>AgentOS</h1>
      <p>Paste the API key the service printed at start (or any key an admin gave you).</p>
      <input name="key" type="password" autocomplete="off" placeholder="API key" aria-label="API key" />
      <button type="submit" class="primary">
        Open the console
      </button>
      <Problem error={props.error} />
    </form>
  );
}

render(<App />, document.getElementById("app") as HTMLElement);
