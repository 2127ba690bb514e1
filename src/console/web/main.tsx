import { render } from "preact";
import { useState } from "preact/hooks";
import { api, apiKey } from "./api.ts";
import { AgentPage } from "./pages/agent.tsx";
import { AgentsPage } from "./pages/agents.tsx";
import { GraphPage } from "./pages/graph.tsx";
import { OperationsPage } from "./pages/operations.tsx";
import { PlanePage } from "./pages/plane.tsx";
import { RealmsPage } from "./pages/realms.tsx";
import { RunPage } from "./pages/run.tsx";
import { WorkflowPage, WorkflowsPage } from "./pages/workflows.tsx";
import { href, type Route, useRoute } from "./router.ts";
import { Problem, useLoad } from "./ui.tsx";

interface Who {
  kind: "admin" | "realm";
  realmId?: string;
}

const PAGES = [
  ["agents", "Agents"],
  ["workflows", "Workflows"],
  ["realms", "Realms"],
  ["graph", "Graph"],
  ["operations", "Operations"],
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
        {PAGES.map(([page, label]) => (
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

function Current(props: { route: Route; admin: boolean }) {
  const { page, id, sub } = props.route;
  if (page === "agents") return id ? <AgentPage id={id} /> : <AgentsPage />;
  if (page === "workflows") return id ? <WorkflowPage id={id} realmId={sub} /> : <WorkflowsPage />;
  if (page === "runs" && id) return <RunPage id={id} />;
  if (page === "operations") return <OperationsPage admin={props.admin} />;
  if (page === "graph") return <GraphPage />;
  if (page === "realms") return <RealmsPage admin={props.admin} />;
  if (page === "plane" && id) return <PlanePage realmId={id} tab={sub} />;
  return <Problem error={`There is no page ${page}: pick one above.`} />;
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
