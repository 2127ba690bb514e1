import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { chainVerifyResult } from "../../shared/outputs.ts";
import { eventToAuditInput, queryAudit, recordAudit, verifyAudit } from "./audit.ts";
import { auditEventInput, auditInput, auditPage, auditQueryInput, auditVerifyInput } from "./schema.ts";

/** The audit log: a SHA-256 hash chain of security-relevant events, queried and verified by admins. */
export function register(worker: WorkerClient): void {
  const state = stateClient((request) => worker.trigger(request));

  // No HTTP route and no auth check: recording is open to every worker, whoever it acts for.
  worker.registerFunction(
    {
      id: "security::audit",
      description: "Append {type, agentId?, detail?} to the audit chain",
      input: auditInput,
    },
    (input) => recordAudit(state, input),
  );

  worker.registerFunction(
    {
      id: "security::audit_event",
      description: "Records a message published on topic `audit` (extra members are kept in detail)",
      input: auditEventInput,
      metadata: { internal: true },
    },
    (event) => recordAudit(state, eventToAuditInput(event)),
  );
  worker.registerTrigger({
    type: "subscribe",
    function_id: "security::audit_event",
    config: { topic: "audit" },
  });

  worker.registerFunction(
    {
      id: "security::audit_query",
      description: "Audit entries, newest first (order=asc for oldest), filtered by type, agentId, from, to",
      input: auditQueryInput,
      output: auditPage,
    },
    (query, ctx) => {
      requireAdmin(ctx);
      return queryAudit(state, query);
    },
  );
  worker.registerTrigger({
    type: "http",
    function_id: "security::audit_query",
    config: { api_path: "/api/audit", http_method: "GET" },
  });

  worker.registerFunction(
    {
      id: "security::audit_verify",
      description: "Verify the audit chain: {valid, length, brokenAt, reason?}",
      input: auditVerifyInput,
      output: chainVerifyResult,
    },
    (_input, ctx) => {
      requireAdmin(ctx);
      return verifyAudit(state);
    },
  );
  worker.registerTrigger({
    type: "http",
    function_id: "security::audit_verify",
    config: { api_path: "/api/audit/verify", http_method: "GET" },
  });
}
