import { api } from "../../api.ts";
import { parseJson, preview, when } from "../../lib/format.ts";
import { Table } from "../../table.tsx";
import type { Answer } from "../../types.ts";
import { ApiForm, Badge, Panel, Show, useLoad } from "../../ui.tsx";
import { VerifyChain } from "../verify-chain.tsx";

const KINDS = [
  "custom",
  "hire_agent",
  "terminate_agent",
  "budget_change",
  "strategy_change",
  "realm_suspend",
];

/** Proposals with their votes, and the realm's activity chain with a check of its hashes. */
export function Council(props: { realmId: string }) {
  const realm = encodeURIComponent(props.realmId);
  const proposals = useLoad(
    () => api<Answer<"council::proposals">>(`/api/council/proposals/${realm}?limit=100`),
    [realm],
  );
  const log = useLoad(() => api<Answer<"council::log">>(`/api/council/log/${realm}?limit=50`), [realm]);
  return (
    <div class="grid">
      <Panel title="Proposals" wide>
        <ApiForm
          submit="Submit proposal"
          fields={[
            { name: "title", label: "Proposal", required: true },
            { name: "kind", label: "Kind", options: KINDS, value: "custom" },
            {
              name: "requestedBy",
              label: "Requested by",
              required: true,
              placeholder: "agent id or your name",
            },
            { name: "quorum", label: "Quorum (votes)", kind: "number", placeholder: "1" },
            { name: "payload", label: "Payload (JSON, optional)", placeholder: '{"agentId": "…"}' },
          ]}
          run={({ title, kind, requestedBy, quorum, payload }) =>
            api("/api/council/proposals", {
              body: {
                realmId: props.realmId,
                title,
                kind,
                requestedBy,
                ...(quorum ? { quorum: Number(quorum) } : {}),
                ...(payload ? { payload: parseJson(payload, "The payload") } : {}),
              },
            })
          }
          onDone={proposals.reload}
        />
        <Show
          loaded={proposals}
          empty={(value) => value.proposals.length === 0}
          whenEmpty="No proposals yet: submit one above (agents submit theirs over the API)."
        >
          {(value) => (
            <Table
              rows={value.proposals}
              rowKey={(proposal) => proposal.id}
              columns={[
                { head: "Title", cell: (proposal) => proposal.title },
                { head: "Kind", cell: (proposal) => proposal.kind },
                { head: "Status", cell: (proposal) => <Badge value={proposal.status} /> },
                {
                  head: "For / against / abstain",
                  cell: ({ tally, quorum }) => (
                    <>
                      {tally.for} / {tally.against} / {tally.abstain} (quorum {quorum})
                    </>
                  ),
                },
                {
                  head: "Votes",
                  cell: (proposal) =>
                    Object.entries(proposal.votes)
                      .map(([voter, vote]) => `${voter}: ${vote.vote}`)
                      .join(", ") || "—",
                },
                { head: "Expires", cell: (proposal) => when(proposal.expiresAt) },
                {
                  head: "Vote",
                  cell: (proposal) =>
                    proposal.status === "pending" ? (
                      <ApiForm
                        submit="Vote"
                        fields={[
                          proposal.voters.length
                            ? { name: "voterId", label: "As", options: proposal.voters }
                            : { name: "voterId", label: "As", required: true, placeholder: "voter id" },
                          { name: "vote", label: "Vote", options: ["for", "against", "abstain"] },
                        ]}
                        run={({ voterId, vote }) =>
                          api(`/api/council/proposals/${realm}/${encodeURIComponent(proposal.id)}/vote`, {
                            body: { voterId, vote },
                          })
                        }
                        onDone={proposals.reload}
                      />
                    ) : null,
                },
                {
                  head: "Cancel",
                  cell: (proposal) =>
                    proposal.status === "pending" ? (
                      <ApiForm
                        submit="Cancel"
                        fields={[{ name: "reason", label: "Why", placeholder: "optional" }]}
                        run={({ reason }) =>
                          api(`/api/council/proposals/${realm}/${encodeURIComponent(proposal.id)}/cancel`, {
                            body: reason ? { reason } : {},
                          })
                        }
                        onDone={proposals.reload}
                      />
                    ) : (
                      (proposal.reason ?? null)
                    ),
                },
              ]}
            />
          )}
        </Show>
      </Panel>
      <Panel title="Activity" wide>
        <VerifyChain chain="activity chain" path={`/api/council/verify/${realm}`} />
        <Show loaded={log}>
          {(value) => (
            <ul class="list">
              {value.entries.map((entry) => (
                <li key={entry.seq}>
                  <span>
                    #{entry.seq} {entry.actorKind} {entry.actorId} {entry.action} {entry.entityType}{" "}
                    {entry.entityId}
                  </span>
                  <small>
                    {when(entry.timestamp)} {entry.details ? preview(entry.details, 120) : ""}
                  </small>
                </li>
              ))}
            </ul>
          )}
        </Show>
      </Panel>
    </div>
  );
}
