import { api } from "../api.ts";
import { href } from "../router.ts";
import type { Answer } from "../types.ts";
import { Badge, Page, Show, useLoad } from "../ui.tsx";
import { Budgets } from "./plane/budgets.tsx";
import { Council } from "./plane/council.tsx";
import { Directives } from "./plane/directives.tsx";
import { Hierarchy } from "./plane/hierarchy.tsx";
import { Missions } from "./plane/missions.tsx";
import { Pulses } from "./plane/pulses.tsx";
import { Swarms } from "./plane/swarms.tsx";

const TABS = [
  ["missions", "Missions"],
  ["directives", "Directives"],
  ["hierarchy", "Org chart"],
  ["budgets", "Budgets"],
  ["pulses", "Pulses"],
  ["council", "Council"],
  ["swarms", "Swarms"],
] as const;

/** One realm's control plane, a tab per concern. */
export function PlanePage(props: { realmId: string; tab?: string }) {
  const tab = props.tab ?? "missions";
  const agents = useLoad(
    () => api<Answer<"agent::list">>(`/api/agents?realmId=${encodeURIComponent(props.realmId)}&limit=200`),
    [props.realmId],
  );
  const realm = useLoad(
    () => api<Answer<"realm::get">>(`/api/realms/${encodeURIComponent(props.realmId)}`),
    [props.realmId],
  );
  return (
    <Page
      title={`Realm ${realm.value?.name ?? props.realmId}`}
      actions={realm.value ? <Badge value={realm.value.status} /> : null}
    >
      <nav class="tabs">
        {TABS.map(([id, label]) => (
          <a key={id} href={href("plane", props.realmId, id)} class={tab === id ? "current" : ""}>
            {label}
          </a>
        ))}
      </nav>
      <Show loaded={agents}>
        {({ agents: list }) => {
          const realmId = props.realmId;
          if (tab === "directives") return <Directives realmId={realmId} />;
          if (tab === "hierarchy") return <Hierarchy realmId={realmId} agents={list} />;
          if (tab === "budgets") return <Budgets realmId={realmId} agents={list} />;
          if (tab === "pulses") return <Pulses realmId={realmId} agents={list} />;
          if (tab === "council") return <Council realmId={realmId} />;
          if (tab === "swarms") return <Swarms realmId={realmId} agents={list} />;
          return <Missions realmId={realmId} agents={list} />;
        }}
      </Show>
    </Page>
  );
}
