// Written by `npm run console:types` from the service's OpenAPI document: do not edit by hand.
// test/console/answer-types.test.ts fails when it no longer matches the document.

export type HierarchyTreeNode = {
  agentId: string;
  title: string;
  capabilities: string[];
  rank: number;
  reports: HierarchyTreeNode[];
};

/** What each routed function answers, by its id (the route's operationId). */
export interface Answers {
  /** Create an agent; returns {id} */
  "agent::create": {
    id: string;
  };
  /** An agent with its full configuration and resolvedTools: the functions its tools name now */
  "agent::get": {
    id: string;
    name: string;
    description?: string;
    model: string;
    systemPrompt?: string;
    tools: string[];
    toolProfile: "chat" | "code" | "research" | "ops" | "data" | "full";
    capabilities?: string[];
    temperature?: number;
    maxTokens?: number;
    fallbackModels?: string[];
    /** The agent's own embedding model; absent or null: AGENTOS_EMBEDDING_MODEL when set, else none */
    embeddingModel?: string | null;
    toolPolicies?: Record<string, {
        approval: "required" | "none";
      }>;
    /** Network for the agent's programs through the guarding proxy; absent or null: none */
    egress?: {
      allowDomains?: string[];
    } | null;
    realmId: string;
    status: "active" | "paused" | "terminated" | "deleting";
    metadata?: Record<string, unknown>;
    createdAt: string;
    updatedAt: string;
    /** The functions the agent's tools name now */
    resolvedTools: string[];
  };
  /** List agents, oldest first, of one realm with {realmId}: {agents, nextCursor} */
  "agent::list": {
    agents: {
      id: string;
      name: string;
      description?: string;
      model: string;
      systemPrompt?: string;
      tools: string[];
      toolProfile: "chat" | "code" | "research" | "ops" | "data" | "full";
      capabilities?: string[];
      temperature?: number;
      maxTokens?: number;
      fallbackModels?: string[];
      /** The agent's own embedding model; absent or null: AGENTOS_EMBEDDING_MODEL when set, else none */
      embeddingModel?: string | null;
      toolPolicies?: Record<string, {
          approval: "required" | "none";
        }>;
      /** Network for the agent's programs through the guarding proxy; absent or null: none */
      egress?: {
        allowDomains?: string[];
      } | null;
      realmId: string;
      status: "active" | "paused" | "terminated" | "deleting";
      metadata?: Record<string, unknown>;
      createdAt: string;
      updatedAt: string;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Search an agent's memory by words and meaning (mode: hybrid, text or vector): {results}, each saying how it matched */
  "agent::memory": {
    results: {
      id: string;
      agentId: string;
      sessionId: string | null;
      role: "user" | "assistant" | "system" | "tool" | "note";
      content: string;
      createdAt: string;
      /** How well the memory matches the query, in [0, 1]: the larger of the words' similarity and the vectors' cosine (clipped at 0) */
      score: number;
      /** What the results are ordered by: text mode the text index's rank score; hybrid and vector the fused rank with recency, in (0, 1] */
      relevance: number;
      /** Which searches found it */
      matchedBy: ("text" | "vector")[];
    }[];
  };
  /** Embed whatever of an agent's memory has no vector for its embedding model yet (in the background): the status */
  "agent::memory_backfill": {
    agentId: string;
    /** The vectors' model, <provider>/<model>; null: the agent has no embedding model */
    model: string | null;
    /** Memories the agent has */
    entries: number;
    /** Of them, those with a vector of the model */
    embedded: number;
    /** Of them, those the provider refused to embed (their content): never sent again, found by words only */
    refused: number;
    /** Of them, those still waiting for one */
    pending: number;
    /** Why this node's last attempt failed (retried with backoff), or null */
    lastError: string | null;
  };
  /** Forget every memory of an agent: {deleted} */
  "agent::memory_clear": {
    deleted: number;
  };
  /** How far an agent's memory is embedded with its embedding model: {model, entries, embedded, pending, lastError} */
  "agent::memory_embeddings": Answers["agent::memory_backfill"];
  /** An agent's memories newest first: {memories, nextCursor} */
  "agent::memory_list": {
    memories: {
      id: string;
      agentId: string;
      sessionId: string | null;
      role: "user" | "assistant" | "system" | "tool" | "note";
      content: string;
      createdAt: string;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Talk to an agent: {content, model, usage, sessionId, toolCalls (with their output)} */
  "agent::message": {
    content: string;
    model: string;
    usage: {
      inputTokens: number;
      outputTokens: number;
      totalTokens: number;
    };
    sessionId: string;
    toolCalls: {
      toolCallId: string;
      toolName: string;
      input: unknown;
      output?: unknown;
    }[];
  };
  /** One session of an agent with a page of its messages, oldest first (tool calls included): {session, messages, nextCursor} */
  "agent::session": {
    session: {
      id: string;
      agentId: string;
      title: string;
      messageCount: number;
      createdAt: string;
      updatedAt: string;
      metadata: Record<string, unknown>;
    };
    messages: {
      role: "user" | "assistant";
      content: string;
      createdAt: string;
      toolCalls?: {
        toolCallId: string;
        toolName: string;
        input: unknown;
        output?: unknown;
      }[];
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** An agent's sessions, newest first: {sessions, nextCursor} */
  "agent::sessions": {
    sessions: {
      id: string;
      agentId: string;
      title: string;
      messageCount: number;
      createdAt: string;
      updatedAt: string;
      metadata: Record<string, unknown>;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Change an agent's configuration (not its name or realm): the agent as it is now */
  "agent::update": {
    id: string;
    name: string;
    description?: string;
    model: string;
    systemPrompt?: string;
    tools: string[];
    toolProfile: "chat" | "code" | "research" | "ops" | "data" | "full";
    capabilities?: string[];
    temperature?: number;
    maxTokens?: number;
    fallbackModels?: string[];
    /** The agent's own embedding model; absent or null: AGENTOS_EMBEDDING_MODEL when set, else none */
    embeddingModel?: string | null;
    toolPolicies?: Record<string, {
        approval: "required" | "none";
      }>;
    /** Network for the agent's programs through the guarding proxy; absent or null: none */
    egress?: {
      allowDomains?: string[];
    } | null;
    realmId: string;
    status: "active" | "paused" | "terminated" | "deleting";
    metadata?: Record<string, unknown>;
    createdAt: string;
    updatedAt: string;
  };
  /** The functions the caller may call (as workflow steps, or grant as agent tools): {functions, count} */
  "api::functions": {
    functions: {
      id: string;
      description: string;
      worker: string;
      /** JSON Schema of the function's input, or null */
      inputSchema: unknown;
      /** Admin keys only: the service's own plumbing */
      internal?: true;
    }[];
    count: number;
  };
  /** Service health: status, version, worker count, uptime */
  "api::health": {
    status: "ok";
    version: string;
    workers: number;
    /** Seconds since the process started */
    uptime: number;
    /** Whether agents' programs run confined: on; off (the operator's AGENTOS_SANDBOX=off); unavailable (programs are refused, reason says what to install); starting (not probed yet) */
    sandbox: {
      mode: "on" | "off" | "unavailable" | "starting";
      reason?: string;
      /** When on: whether memory and process limits hold for all of a run's processes together (a control group per run) or for each process only */
      limits?: "run" | "process";
      /** Why limits hold per process only */
      limitsReason?: string;
      /** When on: whether all runs together weigh less than the service on the CPU (a cpu control group of the runs, AGENTOS_SANDBOX_CPU_WEIGHT) or each run as much as the service */
      cpu?: "weighted" | "unweighted";
      /** Why runs' CPU is not weighted */
      cpuReason?: string;
    };
  };
  /** OpenAPI 3.1 document of every HTTP route */
  "api::openapi": {
    openapi: string;
    info: Record<string, unknown>;
    paths: Record<string, unknown>;
    [key: string]: unknown;
  };
  /** Who the API key is: {kind: admin|realm, keyId, realmId?} (the console reads it) */
  "api::whoami": {
    kind: "admin" | "realm";
    keyId: string;
    /** A realm key's realm */
    realmId?: string;
  };
  /** The workers of this node (admin): in-process ones and remote iii workers with their runtime and function count */
  "api::workers": {
    workers: {
      name: string;
      description?: string;
      /** node for in-process workers; a remote worker's own */
      runtime: string;
      isolation: string | null;
      /** connected: a remote iii worker */
      status: "available" | "connected";
      connected_at_ms: number;
      id?: string;
      version?: string;
      os?: string;
      pid?: number;
      ip_address?: string;
      active_invocations?: number;
      function_count: number;
    }[];
    count: number;
  };
  /** Create an API key (admin, or bound to realmId); the key is shown only in this reply */
  "auth::keys::create": {
    id: string;
    name: string;
    role: "admin" | "realm";
    realmId?: string;
    hint: string;
    createdAt: string;
    /** The key itself: shown this once, never again */
    key: string;
  };
  /** List API keys, oldest first (never the keys themselves): {keys, nextCursor} */
  "auth::keys::list": {
    keys: {
      id: string;
      name: string;
      role: "admin" | "realm";
      realmId?: string;
      hint: string;
      createdAt: string;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Stop a running run (admin): its process group gets TERM, then KILL */
  "bridge::cancel": {
    id: string;
    runtimeId: string;
    kind: "process" | "http" | "claude_code" | "codex" | "cursor" | "opencode";
    agentId: string | null;
    realmId: string | null;
    status: "running" | "completed" | "failed" | "cancelled" | "timed_out" | "interrupted";
    output: unknown;
    error: string | null;
    exitCode: number | null;
    pid: number | null;
    truncated: boolean;
    startedAt: string;
    finishedAt: string | null;
  };
  /** Hand work to a runtime: {runtimeId, agentId?, context?, prompt?} → {runId, status} at once */
  "bridge::invoke": {
    runId: string;
    status: "running" | "completed" | "failed" | "cancelled" | "timed_out" | "interrupted";
  };
  /** The runtimes the caller may invoke: {runtimes, count} */
  "bridge::list": {
    runtimes: {
      id: string;
      kind: "process" | "http" | "claude_code" | "codex" | "cursor" | "opencode";
      name: string;
      command?: string;
      args?: string[];
      url?: string;
      /** Values shown to admin keys only */
      headers?: Record<string, string>;
      /** Values shown to admin keys only */
      env?: Record<string, string>;
      workDir?: string;
      timeoutSecs: number;
      realms?: string[];
      createdAt: string;
    }[];
    count: number;
  };
  /** Register an external runtime (admin): process, http or a coding CLI */
  "bridge::register": {
    id: string;
    kind: "process" | "http" | "claude_code" | "codex" | "cursor" | "opencode";
    name: string;
    command?: string;
    args?: string[];
    url?: string;
    /** Values shown to admin keys only */
    headers?: Record<string, string>;
    /** Values shown to admin keys only */
    env?: Record<string, string>;
    workDir?: string;
    timeoutSecs: number;
    realms?: string[];
    createdAt: string;
  };
  /** One run: {id, runtimeId, agentId, status, output, error, exitCode, ...} */
  "bridge::run": Answers["bridge::cancel"];
  /** Runs the caller may see, newest first, of one runtime with {runtimeId}: {runs, nextCursor} */
  "bridge::runs": {
    runs: {
      id: string;
      runtimeId: string;
      kind: "process" | "http" | "claude_code" | "codex" | "cursor" | "opencode";
      agentId: string | null;
      realmId: string | null;
      status: "running" | "completed" | "failed" | "cancelled" | "timed_out" | "interrupted";
      output: unknown;
      error: string | null;
      exitCode: number | null;
      pid: number | null;
      truncated: boolean;
      startedAt: string;
      finishedAt: string | null;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** The alias table: {aliases: {alias: id}} */
  "catalog::aliases": {
    aliases: Record<string, string>;
  };
  /** Catalog embedding models, optionally of one provider: {models, nextCursor} (the route: a bare array) */
  "catalog::embedding_models": {
    id: string;
    provider: string;
    name: string;
    dimensions: number;
    maxInput: number;
    maxBatch: number;
    inputPrice: number;
    local: boolean;
  }[];
  /** Catalog models, optionally of one tier and/or provider: {models, nextCursor} (the route: a bare array) */
  "catalog::models": {
    id: string;
    provider: string;
    name: string;
    tier: "frontier" | "smart" | "balanced" | "fast" | "local";
    contextWindow: number;
    maxOutput: number;
    inputPrice: number;
    outputPrice: number;
    supportsTools: boolean;
    supportsVision: boolean;
    local: boolean;
  }[];
  /** Providers with availability: a configured key (hosted) or a reachable endpoint (local) */
  "catalog::providers": {
    providers: {
      id: string;
      name: string;
      baseUrl: string;
      local: boolean;
      driver: "anthropic" | "openai" | "google" | "openai_compat";
      /** Hosted: a key is configured; local: the endpoint answered */
      available: boolean;
      reason?: string;
      /** Local: whether realms other than the default may use it (its address set by the operator) */
      openToRealms?: boolean;
    }[];
  };
  /** A one-token request through a provider: {provider, ok, latencyMs, model, error?} */
  "catalog::test_provider": {
    provider: string;
    ok: boolean;
    latencyMs: number;
    model: string;
    error?: string;
  };
  /** Bind a platform channel to an agent of the caller's realm: {platform, channelId, agentId} */
  "channel::bind": {
    platform: string;
    channelId: string;
    agentId: string;
    realmId: string;
    createdAt: string;
    /** Vault entries the channel needs that are missing (the binding is made anyway), e.g. the token replies are sent with */
    warnings: string[];
  };
  /** Channel bindings the caller may see: {bindings, nextCursor} */
  "channel::bindings": {
    platform: string;
    channelId: string;
    agentId: string;
    realmId: string;
    createdAt: string;
  }[];
  /** Replies that could not be delivered (after their retries), newest last: {failed} */
  "channel::failed": {
    /** Oldest first */
    failed: {
      id: string;
      platform: string;
      realmId: string;
      agentId: string;
      sessionId: string;
      phase: "turn" | "deliver";
      text: string;
      replyTo: Record<string, unknown>;
      unprompted?: boolean;
      reply?: string;
      delivered?: number;
      attempts: number;
      lastError?: string;
      leased?: boolean;
      createdAt: string;
      failedAt?: string;
    }[];
  };
  /** Generic webhook: a message to the channel's agent, answered with {response}. Authenticated by an API key, or by X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body> under the vault secret channel:<channelId>:secret; with X-Signature-Timestamp: <unix seconds>, of <timestamp>.<raw body>, within 300 s and taken once */
  "channel::webhook::inbound": {
    /** The agent's answer */
    response: string;
  };
  /** Load integrations/*.toml, agents/* /agent.toml, hands/* /HAND.toml, config/channels/*.toml and workflows/*.yaml again (admin): what changed, and each file's problem */
  "config::reload": {
    agents: {
      created: string[];
      updated: string[];
      unchanged: string[];
    };
    channels: {
      bound: string[];
    };
    hands: {
      scheduled: string[];
      unchanged: string[];
    };
    /** Empty when the integrations could not be read (see problems) */
    integrations: {
      connected?: string[];
      unchanged?: string[];
      pending?: string[];
      removed?: string[];
    };
    workflows: {
      loaded: string[];
      unchanged: string[];
    };
    /** Each file that could not be applied, and why */
    problems: {
      file: string;
      message: string;
    }[];
  };
  /** Check a directory's declarative files (integrations, agents, hands, channels, workflows) without applying them (admin): what each declares, and each file's problem */
  "config::validate": {
    agents: string[];
    channels: string[];
    hands: string[];
    integrations: string[];
    workflows: string[];
    problems: {
      file: string;
      message: string;
    }[];
  };
  /** Append an entry to a realm's hash-chained activity log: the entry with hash and prevHash */
  "council::activity": {
    realmId: string;
    actorKind: "agent" | "human" | "system";
    actorId: string;
    action: string;
    entityType: string;
    entityId: string;
    details?: unknown;
    seq: number;
    id: string;
    timestamp: string;
    prevHash: string;
    hash: string;
  };
  /** Cancel a pending proposal (the key that submitted it, or an admin key): votes close and it has no effect */
  "council::cancel": {
    id: string;
    realmId: string;
    kind: "hire_agent" | "terminate_agent" | "budget_change" | "strategy_change" | "realm_suspend" | "custom";
    title: string;
    requestedBy: string;
    payload: Record<string, unknown> | null;
    status: "pending" | "approved" | "rejected" | "cancelled" | "expired";
    voters: string[];
    quorum: number;
    votes: Record<string, {
        vote: "for" | "against" | "abstain";
        at: string;
      }>;
    tally: {
      for: number;
      against: number;
      abstain: number;
    };
    submittedBy: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    effect?: {
      status: "pending" | "applying" | "applied" | "failed" | "interrupted" | "none";
      functionId?: string;
      result?: unknown;
      error?: string;
      claimedBy?: string;
      claimedAt?: string;
      at?: string;
    };
    reason?: string;
    decidedAt?: string;
    expiresAt: string;
    createdAt: string;
    updatedAt: string;
    version: number;
  };
  /** One proposal of a realm, with its votes, status and effect */
  "council::get": Answers["council::cancel"];
  /** A realm's activity log, newest first by default: {entries, nextCursor} */
  "council::log": {
    entries: {
      realmId: string;
      actorKind: "agent" | "human" | "system";
      actorId: string;
      action: string;
      entityType: string;
      entityId: string;
      details?: unknown;
      seq: number;
      id: string;
      timestamp: string;
      prevHash: string;
      hash: string;
    }[];
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** A realm's proposals, newest first, by status and kind: {proposals, count, nextCursor} */
  "council::proposals": {
    proposals: {
      id: string;
      realmId: string;
      kind: "hire_agent" | "terminate_agent" | "budget_change" | "strategy_change" | "realm_suspend" | "custom";
      title: string;
      requestedBy: string;
      payload: Record<string, unknown> | null;
      status: "pending" | "approved" | "rejected" | "cancelled" | "expired";
      voters: string[];
      quorum: number;
      votes: Record<string, {
          vote: "for" | "against" | "abstain";
          at: string;
        }>;
      tally: {
        for: number;
        against: number;
        abstain: number;
      };
      submittedBy: {
        kind: "system";
      } | {
        kind: "admin";
        keyId: string;
      } | {
        kind: "realm";
        keyId: string;
        realmId: string;
        agentId?: string;
      };
      effect?: {
        status: "pending" | "applying" | "applied" | "failed" | "interrupted" | "none";
        functionId?: string;
        result?: unknown;
        error?: string;
        claimedBy?: string;
        claimedAt?: string;
        at?: string;
      };
      reason?: string;
      decidedAt?: string;
      expiresAt: string;
      createdAt: string;
      updatedAt: string;
      version: number;
    }[];
    /** How many proposals match, over all pages */
    count: number;
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Propose a decision to a realm's council: {realmId, kind, title, requestedBy, payload?} */
  "council::submit": Answers["council::cancel"];
  /** Check a realm's activity chain: {valid, length, brokenAt} (edits, deletions, reordering) */
  "council::verify": {
    valid: boolean;
    length: number;
    brokenAt: number | null;
    reason?: string;
  };
  /** A council member's vote (for, against, abstain; the latest counts); decides at quorum. A notice says when it counted but what follows is left to recovery, or when it was already counted */
  "council::vote": {
    id: string;
    realmId: string;
    kind: "hire_agent" | "terminate_agent" | "budget_change" | "strategy_change" | "realm_suspend" | "custom";
    title: string;
    requestedBy: string;
    payload: Record<string, unknown> | null;
    status: "pending" | "approved" | "rejected" | "cancelled" | "expired";
    voters: string[];
    quorum: number;
    votes: Record<string, {
        vote: "for" | "against" | "abstain";
        at: string;
      }>;
    tally: {
      for: number;
      against: number;
      abstain: number;
    };
    submittedBy: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    effect?: {
      status: "pending" | "applying" | "applied" | "failed" | "interrupted" | "none";
      functionId?: string;
      result?: unknown;
      error?: string;
      claimedBy?: string;
      claimedAt?: string;
      at?: string;
    };
    reason?: string;
    decidedAt?: string;
    expiresAt: string;
    createdAt: string;
    updatedAt: string;
    version: number;
    /** Set when the vote counted but recording what followed failed (its effect is then left to the recovery sweep), or when this same vote was already counted */
    notice?: string;
  };
  /** A directive and its parents up to the root: {ancestry: [{id, title, level}], depth} */
  "directive::ancestry": {
    /** The directive first, then its parents up to the root */
    ancestry: {
      id: string;
      title: string;
      level: "realm" | "team" | "agent";
    }[];
    depth: number;
  };
  /** Create a directive (status Active, version 1) */
  "directive::create": {
    id: string;
    realmId: string;
    title: string;
    description?: string;
    level: "realm" | "team" | "agent";
    status: "Active" | "Paused" | "Complete" | "Cancelled";
    parentId?: string;
    ownerAgentId?: string;
    priority?: "critical" | "high" | "normal" | "low";
    version: number;
    createdAt: string;
    updatedAt: string;
  };
  /** A directive of a realm */
  "directive::get": Answers["directive::create"];
  /** A realm's directives, oldest first, filtered by level, status, parentId: {directives, count, nextCursor} */
  "directive::list": {
    directives: {
      id: string;
      realmId: string;
      title: string;
      description?: string;
      level: "realm" | "team" | "agent";
      status: "Active" | "Paused" | "Complete" | "Cancelled";
      parentId?: string;
      ownerAgentId?: string;
      priority?: "critical" | "high" | "normal" | "low";
      version: number;
      createdAt: string;
      updatedAt: string;
    }[];
    /** How many directives match, over all pages */
    count: number;
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Change title, description, status, priority or owner; expectedVersion makes it conditional */
  "directive::update": Answers["directive::create"];
  /** Liveness for load balancers: no key, no rate limit, no in-flight slot (/api/health is the spec's, with a key) */
  "healthz": {
    status: "ok";
  };
  /** An agent's chain of command, itself first, root last: {chain} (empty outside the chart) */
  "hierarchy::chain": {
    /** The agent, then its managers upwards */
    chain: {
      realmId: string;
      agentId: string;
      reportsTo: string | null;
      title: string;
      capabilities: string[];
      /** 1 is the most senior */
      rank: number;
    }[];
  };
  /** Remove an agent from the org chart; its reports move up to its manager */
  "hierarchy::delete": {
    deleted: boolean;
  };
  /** Nodes holding a capability (whole word, any case): {matches, count} */
  "hierarchy::find": {
    matches: {
      realmId: string;
      agentId: string;
      reportsTo: string | null;
      title: string;
      capabilities: string[];
      /** 1 is the most senior */
      rank: number;
    }[];
    count: number;
  };
  /** Place an agent in the org chart; omitted fields keep their values. Returns the node */
  "hierarchy::set": {
    realmId: string;
    agentId: string;
    reportsTo: string | null;
    title: string;
    capabilities: string[];
    /** 1 is the most senior */
    rank: number;
  };
  /** The org chart as nested {roots: [{agentId, title, capabilities, rank, reports}]} */
  "hierarchy::tree": {
    roots: HierarchyTreeNode[];
  };
  /** The integrations and their tool functions: {integrations: [{name, status, functions, source?, error?}]}. A realm key sees those its realm may call. */
  "integration::list": {
    integrations: {
      name: string;
      file?: string;
      status: "connected" | "pending" | "failed";
      /** The tool functions it registered */
      functions: string[];
      realms?: string[];
      source?: string;
      error?: string;
    }[];
  };
  /** Add the next version of an entity to an agent's graph */
  "kg::add_temporal": {
    entity: string;
    type: string;
    properties: Record<string, unknown>;
    relations: {
      target: string;
      type: string;
    }[];
    version: number;
    /** Epoch milliseconds */
    validFrom: number;
    /** Epoch milliseconds; null: still valid */
    validUntil: number | null;
  };
  /** An entity at timestamp1 against timestamp2: {added, removed, modified} */
  "kg::diff": {
    entity: string;
    fromVersion: number | null;
    toVersion: number | null;
    added: ({
      property: string;
      value: unknown;
    } | {
      relation: {
        target: string;
        type: string;
      };
    })[];
    removed: ({
      property: string;
      value: unknown;
    } | {
      relation: {
        target: string;
        type: string;
      };
    })[];
    modified: {
      property: string;
      before: unknown;
      after: unknown;
    }[];
  };
  /** An entity and what it reaches within depth, now or over a time range: its versions */
  "kg::query_temporal": {
    entity: string;
    type: string;
    properties: Record<string, unknown>;
    relations: {
      target: string;
      type: string;
    }[];
    version: number;
    /** Epoch milliseconds */
    validFrom: number;
    /** Epoch milliseconds; null: still valid */
    validUntil: number | null;
  }[];
  /** {totalEntities, totalRelations, avgDegree, connectedComponents} of an agent's graph */
  "kg::stats": {
    totalEntities: number;
    totalRelations: number;
    avgDegree: number;
    connectedComponents: number;
  };
  /** Every version of an entity, oldest first */
  "kg::timeline": {
    type: string;
    properties: Record<string, unknown>;
    relations: {
      target: string;
      type: string;
    }[];
    version: number;
    /** Epoch milliseconds */
    validFrom: number;
    /** Epoch milliseconds; null: still valid */
    validUntil: number | null;
    createdAt: number;
  }[];
  /** Breadth-first from an entity: {adjacency, paths, nodeCount} */
  "kg::traverse": {
    /** Each expanded entity's neighbours */
    adjacency: Record<string, string[]>;
    /** A shortest path from the start to each entity reached */
    paths: Record<string, string[]>;
    nodeCount: number;
  };
  /** May the agent spend? Its own budget and the realm's both apply; the tighter one is reported */
  "ledger::check": {
    allowed: boolean;
    spentCents: number;
    limitCents: number;
    remainingCents: number;
    utilizationPct: number;
    alert: ("Warning" | "Critical") | null;
    /** Whose budget is the tighter one; null: no budget */
    scope: ("agent" | "realm") | null;
    budgetId: string | null;
    reason?: string;
  };
  /** Create or update a monthly budget, per agent or realm-wide (agentId absent) */
  "ledger::set_budget": {
    id: string;
    realmId: string;
    agentId?: string;
    monthlyCents: number;
    spentCents: number;
    softThreshold: number;
    hardLimit: boolean;
    billingCode?: string;
    version: number;
    periodStart: string;
    updatedAt: string;
    softAlert?: {
      at: string;
      spendId: string;
    };
  };
  /** Record a spend (cents, fractions kept to 6 places); 402 past a hard limit */
  "ledger::spend": {
    id: string;
    realmId: string;
    agentId: string;
    costCents: number;
    provider: string;
    model: string;
    inputTokens: number;
    outputTokens: number;
    missionId?: string;
    billingCode?: string;
    eventId?: string;
    timestamp: string;
    status: "accepted" | "rejected" | "pending";
    reason?: string;
  };
  /** Spend totals of a realm, all time or for one month, broken down by a group */
  "ledger::summary": {
    totalCents: number;
    totalInputTokens: number;
    totalOutputTokens: number;
    eventCount: number;
    /** Cents by the asked group (agent, model, provider, billing code) */
    breakdown: Record<string, number>;
  };
  /** Migrate a autogen project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::autogen": {
    id: string;
    framework: "openclaw" | "langchain" | "langgraph" | "crewai" | "autogen" | "openfang";
    configPath: string;
    version?: string;
    dryRun: boolean;
    startedAt: string;
    finishedAt: string;
    summary: {
      migrated: number;
      unchanged: number;
      skipped: number;
      flagged: number;
      errors: number;
      byType: Record<string, {
          migrated: number;
          skipped: number;
        }>;
    };
    items: {
      type: "agent" | "channel" | "tool" | "cron" | "workflow" | "secret" | "session";
      name: string;
      path: string;
      status: "migrated" | "unchanged" | "would_write" | "would_keep";
      source?: string;
    }[];
    skipped: {
      type: "agent" | "channel" | "tool" | "cron" | "workflow" | "secret" | "session";
      name: string;
      reason: string;
      source?: string;
    }[];
    flags: {
      type: "agent" | "channel" | "tool" | "cron" | "workflow" | "secret" | "session";
      name: string;
      message: string;
    }[];
    secrets: {
      vaultName: string;
      source: string;
      status: "stored" | "kept" | "would_store";
    }[];
    errors: {
      file?: string;
      message: string;
    }[];
    loaded?: unknown;
  };
  /** Migrate a crewai project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::crewai": Answers["migrate::autogen"];
  /** Migrate a langchain project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::langchain": Answers["migrate::autogen"];
  /** Migrate a langgraph project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::langgraph": Answers["migrate::autogen"];
  /** Migrate a openclaw project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::openclaw": Answers["migrate::autogen"];
  /** Migrate a openfang project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::openfang": Answers["migrate::autogen"];
  /** Every migration's report added up: {markdown} or {reports, aggregated: {reports, totals, byFramework, byType}} */
  "migrate::report": {
    markdown: string;
  } | {
    reports: {
      id: string;
      framework: "openclaw" | "langchain" | "langgraph" | "crewai" | "autogen" | "openfang";
      configPath: string;
      startedAt: string;
      dryRun: boolean;
      summary: {
        migrated: number;
        unchanged: number;
        skipped: number;
        flagged: number;
        errors: number;
        byType: Record<string, {
            migrated: number;
            skipped: number;
          }>;
      };
    }[];
    aggregated: {
      reports: number;
      totals: {
        migrated: number;
        skipped: number;
        errors: number;
      };
      byFramework: Record<string, {
          migrated: number;
          skipped: number;
          errors: number;
          runs: number;
        }>;
      byType: Record<string, {
          migrated: number;
          skipped: number;
        }>;
    };
  };
  /** Look for the six frameworks' configuration in baseDir and the directories directly inside it: {frameworks: [{framework, detected, configPath, version, migratable}], summary} */
  "migrate::scan": {
    frameworks: {
      framework: "openclaw" | "langchain" | "langgraph" | "crewai" | "autogen" | "openfang";
      detected: boolean;
      configPath: string | null;
      version: string | null;
      migratable: boolean;
      locations: string[];
    }[];
    summary: {
      scanned: number;
      found: number;
      migratable: number;
    };
  };
  /** An agent takes a mission (from backlog, queued or blocked): atomic, of concurrent checkouts one wins */
  "mission::checkout": {
    id: string;
    realmId: string;
    title: string;
    description?: string;
    status: "backlog" | "queued" | "active" | "review" | "complete" | "blocked" | "cancelled";
    priority: "critical" | "high" | "normal" | "low";
    assigneeId: string | null;
    createdBy: string;
    directiveId?: string;
    parentId?: string;
    billingCode?: string;
    commentCount: number;
    version: number;
    startedAt?: string;
    completedAt?: string;
    createdAt: string;
    updatedAt: string;
  };
  /** Add a comment to a mission */
  "mission::comment": {
    id: string;
    missionId: string;
    authorId: string;
    body: string;
    createdAt: string;
  };
  /** Create a mission (status backlog, unassigned) */
  "mission::create": Answers["mission::checkout"];
  /** A mission with its newest 50 comments */
  "mission::get": {
    id: string;
    realmId: string;
    title: string;
    description?: string;
    status: "backlog" | "queued" | "active" | "review" | "complete" | "blocked" | "cancelled";
    priority: "critical" | "high" | "normal" | "low";
    assigneeId: string | null;
    createdBy: string;
    directiveId?: string;
    parentId?: string;
    billingCode?: string;
    commentCount: number;
    version: number;
    startedAt?: string;
    completedAt?: string;
    createdAt: string;
    updatedAt: string;
    /** The most recent comments, oldest first */
    comments: {
      id: string;
      missionId: string;
      authorId: string;
      body: string;
      createdAt: string;
    }[];
  };
  /** A realm's missions by priority then age, filtered by assigneeId, status, directiveId: {missions, count, nextCursor} */
  "mission::list": {
    missions: {
      id: string;
      realmId: string;
      title: string;
      description?: string;
      status: "backlog" | "queued" | "active" | "review" | "complete" | "blocked" | "cancelled";
      priority: "critical" | "high" | "normal" | "low";
      assigneeId: string | null;
      createdBy: string;
      directiveId?: string;
      parentId?: string;
      billingCode?: string;
      commentCount: number;
      version: number;
      startedAt?: string;
      completedAt?: string;
      createdAt: string;
      updatedAt: string;
    }[];
    /** How many missions match, over all pages */
    count: number;
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** The assignee gives a mission back: queued, unassigned */
  "mission::release": Answers["mission::checkout"];
  /** Move a mission to another status (refused moves are a 409 naming both states) */
  "mission::transition": Answers["mission::checkout"];
  /** OpenAI-compatible chat completions (streaming included) */
  "openai::chat_completions": {
    id: string;
    object: "chat.completion";
    created: number;
    model: string;
    choices: {
      index: number;
      message: {
        role: "assistant";
        content: string | null;
        tool_calls?: {
          id: string;
          type: "function";
          function: {
            name: string;
            arguments: string;
          };
        }[];
      };
      finish_reason: "stop" | "length" | "tool_calls";
    }[];
    usage: {
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
    };
  };
  /** OpenAI-compatible embeddings, passed through to providers that offer them */
  "openai::embeddings": {
    object: "list";
    data: {
      object: "embedding";
      index: number;
      /** Floats, or base64 when asked */
      embedding: number[] | string;
      [key: string]: unknown;
    }[];
    model: string;
    usage?: {
      prompt_tokens: number;
      total_tokens: number;
      [key: string]: unknown;
    };
    [key: string]: unknown;
  };
  /** One OpenAI-compatible model: a catalog id or alias, or agent:<id> */
  "openai::model": {
    id: string;
    object: "model";
    created: number;
    owned_by: string;
  };
  /** OpenAI-compatible model list: catalog models and agents */
  "openai::models": {
    object: "list";
    data: {
      id: string;
      object: "model";
      created: number;
      owned_by: string;
    }[];
  };
  /** Wake an agent now; returns the finished pulse run */
  "pulse::invoke": {
    id: string;
    agentId: string;
    realmId: string;
    status: "Running" | "Completed" | "Failed";
    source: "cron" | "manual";
    contextSnapshot: Record<string, unknown>;
    startedAt: string;
    attempts: number;
    finishedAt?: string;
    output?: string;
    error?: string;
  };
  /** Schedule agent {agentId} of realm {realmId} on six-field {cron}; returns the pulse config */
  "pulse::register": {
    agentId: string;
    realmId: string;
    cron: string;
    enabled: boolean;
    contextMode: "Thin" | "Full";
    contextGraph?: boolean;
    wakeOn?: "always" | "changes";
    timeoutSecs?: number;
    maxRetries?: number;
    createdAt: string;
    updatedAt: string;
  };
  /** An agent's pulse: {config, recentRuns (newest first), lastTick} */
  "pulse::status": {
    /** null: the agent has no pulse */
    config: {
      agentId: string;
      realmId: string;
      cron: string;
      enabled: boolean;
      contextMode: "Thin" | "Full";
      contextGraph?: boolean;
      wakeOn?: "always" | "changes";
      timeoutSecs?: number;
      maxRetries?: number;
      createdAt: string;
      updatedAt: string;
    } | null;
    /** Newest first */
    recentRuns: {
      id: string;
      agentId: string;
      realmId: string;
      status: "Running" | "Completed" | "Failed";
      source: "cron" | "manual";
      contextSnapshot: Record<string, unknown>;
      startedAt: string;
      attempts: number;
      finishedAt?: string;
      output?: string;
      error?: string;
    }[];
    lastTick: {
      at: string;
      outcome: "ran" | "skipped";
      reason?: "not_registered" | "realm_deleted" | "agent_deleted" | "disabled" | "realm_paused" | "realm_archived" | "budget_exceeded" | "already_running" | "realm_busy" | "no_changes";
      runId?: string;
      scheduledTime?: string;
    } | null;
    /** When the pulse fires next (UTC); null when disabled */
    nextFireAt: string | null;
  };
  /** Enable or disable an agent's pulse: {enabled} */
  "pulse::toggle": Answers["pulse::register"];
  /** Create a realm (admin): {name, owner, ...} */
  "realm::create": {
    id: string;
    name: string;
    description?: string;
    status: "Active" | "Paused" | "Archived";
    owner: string;
    defaultModel?: string;
    maxAgents?: number;
    metadata?: Record<string, unknown>;
    createdAt: string;
    updatedAt: string;
    /** true while a delete of the realm is under way or pending */
    deleting?: true;
  };
  /** Delete a realm (admin) with all its agents, directives, missions, budgets, pulses, ... */
  "realm::delete": Answers["hierarchy::delete"];
  /** A realm with its agents, directives and hierarchy; secrets only with scrubSecrets false */
  "realm::export": {
    version: string;
    realm: {
      id: string;
      name: string;
      description?: string;
      status: "Active" | "Paused" | "Archived";
      owner: string;
      defaultModel?: string;
      maxAgents?: number;
      metadata?: Record<string, unknown>;
      createdAt: string;
      updatedAt: string;
      /** true while a delete of the realm is under way or pending */
      deleting?: true;
    };
    /** The realm's agents as GET /api/agents/:id shows them */
    agents: Record<string, unknown>[];
    directives: Record<string, unknown>[];
    hierarchy: {
      agentId: string;
      reportsTo: string | null;
      title: string | null;
      capabilities: string[];
      rank: number;
    }[];
    /** Only with scrubSecrets: false (admin) */
    secrets?: Record<string, string>;
  };
  /** A realm by {id} */
  "realm::get": Answers["realm::create"];
  /** Create a realm from an export document {data, newOwner?} (admin): {imported, realmId} */
  "realm::import": {
    imported: boolean;
    realmId: string;
  };
  /** Every realm the caller may see, oldest first: {realms, nextCursor} (the route: a bare array) */
  "realm::list": {
    id: string;
    name: string;
    description?: string;
    status: "Active" | "Paused" | "Archived";
    owner: string;
    defaultModel?: string;
    maxAgents?: number;
    metadata?: Record<string, unknown>;
    createdAt: string;
    updatedAt: string;
    /** true while a delete of the realm is under way or pending */
    deleting?: true;
  }[];
  /** Change a realm's name, description, status, defaultModel, maxAgents, metadata (null clears); status moves Active⇄Paused, → Archived */
  "realm::update": Answers["realm::create"];
  /** Audit entries, newest first (order=asc for oldest), filtered by type, agentId, from, to */
  "security::audit_query": {
    entries: {
      type: string;
      agentId?: string;
      detail?: Record<string, unknown>;
      seq: number;
      id: string;
      timestamp: string;
      prevHash: string;
      hash: string;
    }[];
    /** Entries on this page */
    count: number;
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Verify the audit chain: {valid, length, brokenAt, reason?} */
  "security::audit_verify": Answers["council::verify"];
  /** A member's observation, proposal or vote (for, against, abstain; the latest counts) */
  "swarm::broadcast": {
    acknowledged: boolean;
    swarmId: string;
    seq: number;
  };
  /** Every message: {totalMessages, observations, proposals, votes, agents} */
  "swarm::collect": {
    totalMessages: number;
    observations: {
      seq: number;
      agentId: string;
      message: string;
      type: "observation" | "proposal" | "vote";
      vote?: "for" | "against" | "abstain";
      at: string;
    }[];
    proposals: {
      seq: number;
      agentId: string;
      message: string;
      type: "observation" | "proposal" | "vote";
      vote?: "for" | "against" | "abstain";
      at: string;
    }[];
    votes: {
      seq: number;
      agentId: string;
      message: string;
      type: "observation" | "proposal" | "vote";
      vote?: "for" | "against" | "abstain";
      at: string;
    }[];
    /** Each member's messages */
    agents: Record<string, {
        seq: number;
        agentId: string;
        message: string;
        type: "observation" | "proposal" | "vote";
        vote?: "for" | "against" | "abstain";
        at: string;
      }[]>;
  };
  /** Whether the members agree on a proposal: {hasConsensus, votesFor, votesAgainst, threshold, totalVoters} */
  "swarm::consensus": {
    proposal: string;
    hasConsensus: boolean;
    votesFor: number;
    votesAgainst: number;
    threshold: number;
    totalVoters: number;
  };
  /** Start a swarm of a realm's agents on a goal: {swarmId, ...} */
  "swarm::create": {
    swarmId: string;
    realmId: string;
    goal: string;
    agentIds: string[];
    maxDurationMs: number;
    consensusThreshold: number;
    status: "active" | "dissolved" | "expired";
    messageCount: number;
    createdAt: string;
    expiresAt: string;
    endedAt?: string;
  };
  /** End a swarm; each member's findings go to its memory (session swarm:<id>) */
  "swarm::dissolve": {
    swarmId: string;
    status: "active" | "dissolved" | "expired";
    messageCount: number;
    /** Members whose findings were kept in their memory */
    archived: number;
  };
  /** A realm's swarms, newest first, filtered by status: {swarms, count, nextCursor} */
  "swarm::list": {
    swarms: {
      swarmId: string;
      realmId: string;
      goal: string;
      agentIds: string[];
      maxDurationMs: number;
      consensusThreshold: number;
      status: "active" | "dissolved" | "expired";
      messageCount: number;
      createdAt: string;
      expiresAt: string;
      endedAt?: string;
    }[];
    /** How many swarms match, over all pages */
    count: number;
    /** Pass as `cursor` for the next page; null on the last */
    nextCursor: string | null;
  };
  /** Let the swarm run itself: each member agent, in parallel, weighs in on the goal each round until consensus */
  "swarm::run": {
    swarmId: string;
    rounds: number;
    consensus: {
      proposal: string;
      hasConsensus: boolean;
      votesFor: number;
      votesAgainst: number;
      threshold: number;
      totalVoters: number;
    };
    failures: {
      round: number;
      agentId: string;
      error: string;
    }[];
  };
  /** A swarm: its goal, members, status and message count */
  "swarm::status": Answers["swarm::create"];
  /** An agent's tool calls that wait for approval (or were decided): {approvals} */
  "tools::approvals": {
    /** Oldest first */
    approvals: {
      callId: string;
      agentId: string;
      realmId?: string;
      proposalId?: string;
      functionId: string;
      input: unknown;
      status: "pending" | "approved" | "denied" | "expired";
      createdAt: string;
      decidedAt?: string;
      decidedBy?: string;
      reason?: string;
    }[];
  };
  /** Approve or deny an agent's pending tool call (admin, or a key of the agent's realm; never an agent): the waiting turn goes on */
  "tools::decide": {
    callId: string;
    agentId: string;
    realmId?: string;
    proposalId?: string;
    functionId: string;
    input: unknown;
    status: "pending" | "approved" | "denied" | "expired";
    createdAt: string;
    decidedAt?: string;
    decidedBy?: string;
    reason?: string;
  };
  /** Secret names and timestamps (never values) */
  "vault::list": {
    keys: {
      key: string;
      createdAt: string;
      updatedAt: string;
    }[];
    count: number;
  };
  /** Store a secret {key, value}, encrypted; returns {key, createdAt, updatedAt} */
  "vault::set": {
    key: string;
    createdAt: string;
    updatedAt: string;
  };
  /** Cancel a running run: its running step is aborted and the run ends cancelled */
  "workflow::cancel": {
    runId: string;
    workflowId: string;
    realmId: string;
    status: "running" | "completed" | "failed" | "interrupted" | "cancelled";
    position: number;
    completedSteps: number;
    stoppedAt?: string;
    error?: string;
    cancelRequested?: true;
    retries?: number;
  };
  /** Store a new workflow definition in a realm (an existing id is a 409); returns {id, version} */
  "workflow::create": {
    id: string;
    realmId: string;
    version: number;
  };
  /** Delete a workflow and its run history */
  "workflow::delete": {
    deleted: boolean;
    id: string;
    realmId: string;
  };
  /** One workflow definition, with missingFunctions: optional steps' functions not registered now */
  "workflow::get": {
    id: string;
    realmId: string;
    name: string;
    description?: string;
    steps: {
      name: string;
      functionId: string;
      mode: "sequential" | "fanout" | "collect" | "conditional" | "loop";
      promptTemplate?: string;
      timeoutMs?: number;
      errorMode: "fail" | "skip" | "retry";
      maxRetries: number;
      outputVar?: string;
      condition?: string;
      maxIterations: number;
      until?: string;
      args?: Record<string, unknown>;
      agentId?: string;
      optional?: boolean;
    }[];
    version: number;
    author: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    createdAt: string;
    updatedAt: string;
    /** Functions of optional steps that are not registered now */
    missingFunctions: string[];
  };
  /** One run with its step history */
  "workflow::get_run": {
    runId: string;
    workflowId: string;
    workflowVersion?: number;
    realmId?: string;
    principal?: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    status: "running" | "completed" | "failed" | "interrupted" | "cancelled";
    input: unknown;
    agentId?: string;
    results: {
      stepName: string;
      output: unknown;
      durationMs: number;
      error?: string;
      skipped?: true;
    }[];
    vars: Record<string, unknown>;
    position: number;
    error?: string;
    stoppedAt?: string;
    startedAt: string;
    finishedAt?: string;
    failedAt?: string;
    owner?: string;
    heartbeatAt?: string;
    leaseUntil?: string;
    leaseMs?: number;
    cancelRequested?: true;
    retries?: number;
    chain?: string[];
  };
  /** A realm's workflow definitions by id: {workflows, nextCursor} (the route: a bare array) */
  "workflow::list": {
    id: string;
    realmId: string;
    name: string;
    description?: string;
    steps: {
      name: string;
      functionId: string;
      mode: "sequential" | "fanout" | "collect" | "conditional" | "loop";
      promptTemplate?: string;
      timeoutMs?: number;
      errorMode: "fail" | "skip" | "retry";
      maxRetries: number;
      outputVar?: string;
      condition?: string;
      maxIterations: number;
      until?: string;
      args?: Record<string, unknown>;
      agentId?: string;
      optional?: boolean;
    }[];
    version: number;
    author: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    createdAt: string;
    updatedAt: string;
  }[];
  /** Resume a failed, interrupted or cancelled run from its last checkpoint, in the background */
  "workflow::retry": Answers["workflow::cancel"];
  /** Run a workflow: {runId, status, results, vars}; with async: true, {runId, status} at once (202) */
  "workflow::run": {
    runId: string;
    status: "running" | "completed" | "failed" | "interrupted" | "cancelled";
    results: {
      stepName: string;
      output: unknown;
      durationMs: number;
      error?: string;
      skipped?: true;
    }[];
    vars: Record<string, unknown>;
  } | {
    runId: string;
    status: "running" | "completed" | "failed" | "interrupted" | "cancelled";
    workflowId: string;
    realmId: string;
  };
  /** A workflow's runs, newest first: {runs, total, limit, offset} */
  "workflow::runs": {
    runs: {
      runId: string;
      workflowId: string;
      workflowVersion?: number;
      realmId?: string;
      principal?: {
        kind: "system";
      } | {
        kind: "admin";
        keyId: string;
      } | {
        kind: "realm";
        keyId: string;
        realmId: string;
        agentId?: string;
      };
      status: "running" | "completed" | "failed" | "interrupted" | "cancelled";
      input: unknown;
      agentId?: string;
      results: {
        stepName: string;
        output: unknown;
        durationMs: number;
        error?: string;
        skipped?: true;
      }[];
      vars: Record<string, unknown>;
      position: number;
      error?: string;
      stoppedAt?: string;
      startedAt: string;
      finishedAt?: string;
      failedAt?: string;
      owner?: string;
      heartbeatAt?: string;
      leaseUntil?: string;
      leaseMs?: number;
      cancelRequested?: true;
      retries?: number;
      chain?: string[];
    }[];
    total: number;
    limit: number;
    offset: number;
  };
  /** Change a workflow (name, description, steps); the version goes up by one */
  "workflow::update": {
    id: string;
    realmId: string;
    name: string;
    description?: string;
    steps: {
      name: string;
      functionId: string;
      mode: "sequential" | "fanout" | "collect" | "conditional" | "loop";
      promptTemplate?: string;
      timeoutMs?: number;
      errorMode: "fail" | "skip" | "retry";
      maxRetries: number;
      outputVar?: string;
      condition?: string;
      maxIterations: number;
      until?: string;
      args?: Record<string, unknown>;
      agentId?: string;
      optional?: boolean;
    }[];
    version: number;
    author: {
      kind: "system";
    } | {
      kind: "admin";
      keyId: string;
    } | {
      kind: "realm";
      keyId: string;
      realmId: string;
      agentId?: string;
    };
    createdAt: string;
    updatedAt: string;
  };
}
