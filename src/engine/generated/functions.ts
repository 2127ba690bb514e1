// Written by `npm run engine:types` from the functions a default service registers: do not edit by hand.
// test/engine/function-types.test.ts fails when it no longer matches them.

export type HierarchyTreeNode = {
  agentId: string;
  title: string;
  capabilities: string[];
  rank: number;
  reports: HierarchyTreeNode[];
};

/** Every function's input and answer, by its id: what `call` (src/engine/call.ts) is typed by. */
export interface Functions {
  /** Which of {functionIds} agent {agentId} may not call: {denied} */
  "agent::authorize": {
    input: {
      agentId: string;
      functionIds: string[];
    };
    output: {
      denied: string[];
    };
  };
  /** Send {message} to agent {agentId} in session {sessionId?} */
  "agent::chat": {
    input: {
      agentId: string;
      message: string;
      sessionId?: string;
      context?: Record<string, unknown>;
    };
    output: {
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
  };
  /** The agent answering a whole conversation {messages} without a session */
  "agent::complete": {
    input: {
      agentId: string;
      messages: Record<string, unknown>[];
      system?: string;
      temperature?: number;
      maxTokens?: number;
      withTools?: boolean;
      keep?: boolean;
    };
    output: {
      content: string;
      model: string;
      usage: {
        inputTokens: number;
        outputTokens: number;
        totalTokens: number;
      };
      finishReason: string;
      toolCalls: {
        toolCallId: string;
        toolName: string;
        input: unknown;
        output?: unknown;
      }[];
      sessionId?: string;
    };
  };
  /** Create an agent; returns {id} */
  "agent::create": {
    input: {
      name: string;
      description?: string;
      model?: string;
      systemPrompt?: string;
      tools?: string[];
      toolProfile?: "chat" | "code" | "research" | "ops" | "data" | "full";
      capabilities?: string[];
      temperature?: number;
      maxTokens?: number;
      fallbackModels?: string[];
      /** The embedding model its memory is recalled by meaning with: a catalog id, an alias or <provider>/<model> (GET /api/models/embeddings); null: none (AGENTOS_EMBEDDING_MODEL applies when set) */
      embeddingModel?: string | null;
      realmId?: string;
      metadata?: Record<string, unknown>;
      toolPolicies?: Record<string, {
          approval: "required" | "none";
        }>;
      egress?: {
        allowDomains?: string[];
      } | null;
    };
    output: {
      id: string;
    };
  };
  /** Delete an agent and all its data (sessions, memory) */
  "agent::delete": {
    input: {
      id: string;
    };
    output: void;
  };
  /** An agent with its full configuration and resolvedTools: the functions its tools name now */
  "agent::get": {
    input: {
      id: string;
    };
    output: {
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
  };
  /** List agents, oldest first, of one realm with {realmId}: {agents, nextCursor} */
  "agent::list": {
    input: {
      realmId?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Search an agent's memory by words and meaning (mode: hybrid, text or vector): {results}, each saying how it matched */
  "agent::memory": {
    input: {
      id: string;
      query: string;
      limit?: number;
      /** hybrid: words and meaning fused (the default when the agent has an embedding model); text: words only (the default without one); vector: meaning only (needs an embedding model) */
      mode?: "hybrid" | "text" | "vector";
    };
    output: {
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
  };
  /** Embed whatever of an agent's memory has no vector for its embedding model yet (in the background): the status */
  "agent::memory_backfill": {
    input: {
      id: string;
    };
    output: {
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
  };
  /** Forget every memory of an agent: {deleted} */
  "agent::memory_clear": {
    input: {
      id: string;
    };
    output: {
      deleted: number;
    };
  };
  /** Forget one memory of an agent */
  "agent::memory_delete": {
    input: {
      id: string;
      memoryId: string;
    };
    output: void;
  };
  /** How far an agent's memory is embedded with its embedding model: {model, entries, embedded, pending, lastError} */
  "agent::memory_embeddings": {
    input: {
      id: string;
    };
    output: {
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
  };
  /** An agent's memories newest first: {memories, nextCursor} */
  "agent::memory_list": {
    input: {
      id: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Talk to an agent: {content, model, usage, sessionId, toolCalls (with their output)} */
  "agent::message": {
    input: {
      id: string;
      message: string;
      sessionId?: string;
      context?: Record<string, unknown>;
      stream?: boolean;
    };
    output: {
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
  };
  /** Delete every agent of {realmId} with all its data (part of realm::delete) */
  "agent::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** The agent an id or name names, among those the caller may see: {agentId}; 404 when none */
  "agent::resolve": {
    input: {
      model: string;
    };
    output: {
      agentId: string;
    };
  };
  /** One session of an agent with a page of its messages, oldest first (tool calls included): {session, messages, nextCursor} */
  "agent::session": {
    input: {
      id: string;
      sessionId: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** An agent's sessions, newest first: {sessions, nextCursor} */
  "agent::sessions": {
    input: {
      id: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Change an agent's configuration (not its name or realm): the agent as it is now */
  "agent::update": {
    input: {
      description?: string;
      model?: string;
      systemPrompt?: string;
      tools?: string[];
      capabilities?: string[];
      temperature?: number;
      maxTokens?: number;
      fallbackModels?: string[];
      /** The embedding model its memory is recalled by meaning with: a catalog id, an alias or <provider>/<model> (GET /api/models/embeddings); null: none (AGENTOS_EMBEDDING_MODEL applies when set) */
      embeddingModel?: string | null;
      metadata?: Record<string, unknown>;
      toolPolicies?: Record<string, {
          approval: "required" | "none";
        }>;
      egress?: {
        allowDomains?: string[];
      } | null;
      id: string;
      toolProfile?: "chat" | "code" | "research" | "ops" | "data" | "full";
    };
    output: {
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
  };
  /** The functions the caller may call (as workflow steps, or grant as agent tools): {functions, count} */
  "api::functions": {
    input: {
      prefix?: string;
    };
    output: {
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
  };
  /** Service health: status, version, worker count, uptime */
  "api::health": {
    input: Record<string, never>;
    output: {
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
  };
  /** OpenAPI 3.1 document of every HTTP route */
  "api::openapi": {
    input: Record<string, never>;
    output: {
      openapi: string;
      info: Record<string, unknown>;
      paths: Record<string, unknown>;
      [key: string]: unknown;
    };
  };
  /** Who the API key is: {kind: admin|realm, keyId, realmId?} (the console reads it) */
  "api::whoami": {
    input: Record<string, never>;
    output: {
      kind: "admin" | "realm";
      keyId: string;
      /** A realm key's realm */
      realmId?: string;
    };
  };
  /** The workers of this node (admin): in-process ones and remote iii workers with their runtime and function count */
  "api::workers": {
    input: Record<string, never>;
    output: {
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
  };
  /** Create an API key (admin, or bound to realmId); the key is shown only in this reply */
  "auth::keys::create": {
    input: {
      name?: string;
      realmId?: string;
    };
    output: {
      id: string;
      name: string;
      role: "admin" | "realm";
      realmId?: string;
      hint: string;
      createdAt: string;
      /** The key itself: shown this once, never again */
      key: string;
    };
  };
  /** List API keys, oldest first (never the keys themselves): {keys, nextCursor} */
  "auth::keys::list": {
    input: {
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Revoke an API key by id */
  "auth::keys::revoke": {
    input: {
      id: string;
    };
    output: void;
  };
  /** Revoke every API key bound to {realmId} (part of a realm delete); idempotent */
  "auth::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Stop a running run (admin): its process group gets TERM, then KILL */
  "bridge::cancel": {
    input: {
      runId: string;
    };
    output: {
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
  };
  /** Hand work to a runtime: {runtimeId, agentId?, context?, prompt?} → {runId, status} at once */
  "bridge::invoke": {
    input: {
      runtimeId: string;
      agentId?: string;
      context?: unknown;
      prompt?: string;
    };
    output: {
      runId: string;
      status: "running" | "completed" | "failed" | "cancelled" | "timed_out" | "interrupted";
    };
  };
  /** The runtimes the caller may invoke: {runtimes, count} */
  "bridge::list": {
    input: Record<string, never>;
    output: {
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
  };
  /** Delete a realm's bridge runs (part of a realm delete) */
  "bridge::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Register an external runtime (admin): process, http or a coding CLI */
  "bridge::register": {
    input: {
      kind: "process" | "http" | "claude_code" | "codex" | "cursor" | "opencode";
      name: string;
      command?: string;
      args?: string[];
      url?: string;
      headers?: Record<string, string>;
      env?: Record<string, string>;
      workDir?: string;
      timeoutSecs?: number;
      realms?: string[];
    };
    output: {
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
  };
  /** One run: {id, runtimeId, agentId, status, output, error, exitCode, ...} */
  "bridge::run": {
    input: {
      runId: string;
    };
    output: {
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
  };
  /** Runs the caller may see, newest first, of one runtime with {runtimeId}: {runs, nextCursor} */
  "bridge::runs": {
    input: {
      runtimeId?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** The alias table: {aliases: {alias: id}} */
  "catalog::aliases": {
    input: Record<string, never>;
    output: {
      aliases: Record<string, string>;
    };
  };
  /** A model's entry and its provider's configuration: {model, provider} */
  "catalog::choice": {
    input: {
      model: string;
    };
    output: {
      model: {
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
      };
      provider: {
        id: string;
        name: string;
        baseUrl: string;
        envKey: string;
        local: boolean;
        driver: "anthropic" | "openai" | "google" | "openai_compat";
        openToRealms?: boolean;
      };
    };
  };
  /** The default agent model: the catalog's default if its provider is usable, else the best usable one */
  "catalog::default_model": {
    input: Record<string, never>;
    output: {
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
    };
  };
  /** Catalog embedding models, optionally of one provider: {models, nextCursor} (the route: a bare array) */
  "catalog::embedding_models": {
    input: {
      provider?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
      models: {
        id: string;
        provider: string;
        name: string;
        dimensions: number;
        maxInput: number;
        maxBatch: number;
        inputPrice: number;
        local: boolean;
      }[];
      /** Pass as `cursor` for the next page; null on the last */
      nextCursor: string | null;
    };
  };
  /** Catalog models, optionally of one tier and/or provider: {models, nextCursor} (the route: a bare array) */
  "catalog::models": {
    input: {
      tier?: "frontier" | "smart" | "balanced" | "fast" | "local";
      provider?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
      models: {
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
      /** Pass as `cursor` for the next page; null on the last */
      nextCursor: string | null;
    };
  };
  /** One provider's configuration {id, name, baseUrl, envKey, local, driver} (no availability probe) */
  "catalog::provider": {
    input: {
      id: string;
    };
    output: {
      id: string;
      name: string;
      baseUrl: string;
      envKey: string;
      local: boolean;
      driver: "anthropic" | "openai" | "google" | "openai_compat";
      openToRealms?: boolean;
    };
  };
  /** May agents (of a realm) use this provider: {configured, reason?} (hosted: a key is set; local: not probed, open to other realms once its base URL is set) */
  "catalog::provider_configured": {
    input: {
      id: string;
      /** The realm whose agent would use it */
      realmId?: string;
    };
    output: {
      configured: boolean;
      /** Why not: the key to set */
      reason?: string;
    };
  };
  /** Providers with availability: a configured key (hosted) or a reachable endpoint (local) */
  "catalog::providers": {
    input: Record<string, never>;
    output: {
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
  };
  /** The full entry for a catalog id, an alias, or <local provider>/<model> */
  "catalog::resolve": {
    input: {
      model: string;
    };
    output: {
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
    };
  };
  /** An embedding model's entry and its provider's configuration: {model, provider}; the service default (AGENTOS_EMBEDDING_MODEL, else the catalog's) without a model */
  "catalog::resolve_embedding": {
    input: {
      /** An embedding model's id, alias or <provider>/<model>; the service default when left out */
      model?: string;
    };
    output: {
      model: {
        id: string;
        provider: string;
        name: string;
        /** Unknown for an unlisted <provider>/<model>: the first answer tells */
        dimensions?: number;
        maxInput: number;
        maxBatch: number;
        inputPrice: number;
        local: boolean;
      };
      provider: {
        id: string;
        name: string;
        baseUrl: string;
        envKey: string;
        local: boolean;
        driver: "anthropic" | "openai" | "google" | "openai_compat";
        openToRealms?: boolean;
      };
    };
  };
  /** A one-token request through a provider: {provider, ok, latencyMs, model, error?} */
  "catalog::test_provider": {
    input: {
      provider: string;
    };
    output: {
      provider: string;
      ok: boolean;
      latencyMs: number;
      model: string;
      error?: string;
    };
  };
  /** Bind a platform channel to an agent of the caller's realm: {platform, channelId, agentId} */
  "channel::bind": {
    input: {
      platform: string;
      channelId: string;
      agentId: string;
    };
    output: {
      platform: string;
      channelId: string;
      agentId: string;
      realmId: string;
      createdAt: string;
      /** Vault entries the channel needs that are missing (the binding is made anyway), e.g. the token replies are sent with */
      warnings: string[];
    };
  };
  /** Channel bindings the caller may see: {bindings, nextCursor} */
  "channel::bindings": {
    input: {
      realmId?: string;
      platform?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
      bindings: {
        platform: string;
        channelId: string;
        agentId: string;
        realmId: string;
        createdAt: string;
      }[];
      /** Pass as `cursor` for the next page; null on the last */
      nextCursor: string | null;
    };
  };
  /** discord webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::discord::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Replies that could not be delivered (after their retries), newest last: {failed} */
  "channel::failed": {
    input: {
      realmId?: string;
    };
    output: {
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
  };
  /** github webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::github::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** line webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::line::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** matrix webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::matrix::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** messenger webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::messenger::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Forget delivered event ids older than a week and the turn counts of ended windows (cron, internal) */
  "channel::prune": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Delete an agent's channel bindings and queued replies (agent delete) */
  "channel::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete a realm's channel bindings and queued replies (realm delete) */
  "channel::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Send text to a bound platform channel as its agent (queued and retried until delivered): {queued} */
  "channel::send": {
    input: {
      channelId: string;
      text: string;
      agentId: string;
    };
    output: unknown;
  };
  /** slack webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::slack::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Run the channel jobs that are due (cron, internal) */
  "channel::sweep": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** teams webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::teams::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** telegram webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::telegram::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** twilio webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::twilio::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Remove a channel's binding */
  "channel::unbind": {
    input: {
      platform: string;
      channelId: string;
    };
    output: void;
  };
  /** Generic webhook: a message to the channel's agent, answered with {response}. Authenticated by an API key, or by X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body> under the vault secret channel:<channelId>:secret; with X-Signature-Timestamp: <unix seconds>, of <timestamp>.<raw body>, within 300 s and taken once */
  "channel::webhook::inbound": {
    input: Record<string, unknown>;
    output: {
      /** The agent's answer */
      response: string;
    };
  };
  /** whatsapp webhook: verified, acknowledged at once, answered through the platform's API */
  "channel::whatsapp::webhook": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** The id of a realm's agent by name (declared in agents/, else made over the API): {agentId}, or 404 */
  "config::agent_id": {
    input: {
      name: string;
      realmId: string;
    };
    output: {
      agentId: string;
    };
  };
  /** Load integrations/*.toml, agents/* /agent.toml, hands/* /HAND.toml, config/channels/*.toml and workflows/*.yaml again (admin): what changed, and each file's problem */
  "config::reload": {
    input: Record<string, never>;
    output: {
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
  };
  /** Check a directory's declarative files (integrations, agents, hands, channels, workflows) without applying them (admin): what each declares, and each file's problem */
  "config::validate": {
    input: {
      directory?: string;
    };
    output: {
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
  };
  /** Append an entry to a realm's hash-chained activity log: the entry with hash and prevHash */
  "council::activity": {
    input: {
      realmId: string;
      actorKind: string;
      actorId: string;
      action: string;
      entityType: string;
      entityId: string;
      details?: unknown;
    };
    output: {
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
  };
  /** Cancel a pending proposal (the key that submitted it, or an admin key): votes close and it has no effect */
  "council::cancel": {
    input: {
      realmId: string;
      id: string;
      reason?: string;
    };
    output: {
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
  };
  /** One proposal of a realm, with its votes, status and effect */
  "council::get": {
    input: {
      realmId: string;
      id: string;
    };
    output: {
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
  };
  /** A realm's activity log, newest first by default: {entries, nextCursor} */
  "council::log": {
    input: {
      realmId: string;
      order?: "asc" | "desc";
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** A realm's proposals, newest first, by status and kind: {proposals, count, nextCursor} */
  "council::proposals": {
    input: {
      realmId: string;
      status?: string;
      kind?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Delete a realm's proposals and activity log (part of a realm delete); idempotent */
  "council::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Propose a decision to a realm's council: {realmId, kind, title, requestedBy, payload?} */
  "council::submit": {
    input: {
      realmId: string;
      kind: string;
      title: string;
      requestedBy: string;
      payload?: Record<string, unknown> | null;
      quorum?: number;
      expiresInMs?: number;
    };
    output: {
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
  };
  /** Apply approved effects their vote left pending; report those whose process stopped mid-effect as interrupted (cron, internal) */
  "council::sweep_effects": {
    input: Record<string, unknown>;
    output: {
      /** Pending effects claimed and applied (or failed) now */
      settled: number;
      /** Claims whose process stopped mid-effect, reported interrupted */
      interrupted: number;
      /** Marks of effects with an outcome already, or of approvals never written */
      dropped: number;
    };
  };
  /** Check a realm's activity chain: {valid, length, brokenAt} (edits, deletions, reordering) */
  "council::verify": {
    input: {
      realmId: string;
    };
    output: {
      valid: boolean;
      length: number;
      brokenAt: number | null;
      reason?: string;
    };
  };
  /** A council member's vote (for, against, abstain; the latest counts); decides at quorum. A notice says when it counted but what follows is left to recovery, or when it was already counted */
  "council::vote": {
    input: {
      realmId: string;
      id: string;
      voterId: string;
      vote: string;
    };
    output: {
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
  };
  /** A directive and its parents up to the root: {ancestry: [{id, title, level}], depth} */
  "directive::ancestry": {
    input: {
      realmId: string;
      id: string;
    };
    output: {
      /** The directive first, then its parents up to the root */
      ancestry: {
        id: string;
        title: string;
        level: "realm" | "team" | "agent";
      }[];
      depth: number;
    };
  };
  /** Create a directive (status Active, version 1) */
  "directive::create": {
    input: {
      realmId: string;
      title: string;
      level: string;
      description?: string;
      parentId?: string;
      ownerAgentId?: string;
      priority?: string;
    };
    output: {
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
  };
  /** A directive of a realm */
  "directive::get": {
    input: {
      realmId: string;
      id: string;
    };
    output: {
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
  };
  /** A realm's directives, oldest first, filtered by level, status, parentId: {directives, count, nextCursor} */
  "directive::list": {
    input: {
      realmId: string;
      level?: string;
      status?: string;
      parentId?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Delete every directive of a realm (part of a realm delete); idempotent */
  "directive::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Change title, description, status, priority or owner; expectedVersion makes it conditional */
  "directive::update": {
    input: {
      title?: string;
      description?: string | null;
      status?: string;
      priority?: string | null;
      ownerAgentId?: string | null;
      realmId: string;
      id: string;
      expectedVersion?: number;
    };
    output: {
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
  };
  /** The ids engine::functions::list names, sorted: {ids} */
  "engine::functions::ids": {
    input: Record<string, never>;
    output: {
      ids: string[];
    };
  };
  /** One function: {function_id, worker_name, description, metadata, request_schema} */
  "engine::functions::info": {
    input: {
      function_id: string;
    };
    output: {
      function_id: string;
      worker_name: string;
      description?: string;
      metadata?: Record<string, unknown>;
      request_schema?: Record<string, unknown>;
    };
  };
  /** List registered functions */
  "engine::functions::list": {
    input: {
      prefix?: string;
      include_internal?: boolean;
    };
    output: {
      functions: {
        function_id: string;
        worker_name: string;
        description?: string;
        metadata?: Record<string, unknown>;
      }[];
    };
  };
  /** Tell this process's observers (metrics, logs) about work done (see telemetry.ts) */
  "engine::telemetry": {
    input: {
      type: "model_call";
      provider: string;
      model: string;
      durationMs: number;
      outcome: "ok" | "error";
    } | {
      type: "model_usage";
      provider: string;
      model: string;
      realmId: string;
      inputTokens: number;
      outputTokens: number;
      costUsd: number;
    } | {
      type: "tool_call";
      tool: string;
      agentId: string;
      outcome: "ok" | "error" | "denied";
      durationMs: number;
      argumentNames: string[];
    } | {
      type: "pulse_run";
      agentId: string;
      realmId: string;
      outcome: "completed" | "failed" | "skipped";
      durationMs?: number;
      reason?: string;
    } | {
      type: "channel_turn" | "channel_delivery";
      platform: string;
      realmId: string;
      agentId: string;
      jobId: string;
      attempt: number;
      outcome: "failed";
      reason: string;
    } | {
      type: "channel_dropped";
      platform: string;
      over: "channel" | "sender";
    } | {
      type: "memory_embedding";
      embedded: number;
      failed: number;
      refused: number;
      rejected?: number;
      pending: number;
    } | {
      type: "workflow";
      event: string;
      workflowId: string;
      runId: string;
      status: string;
      step?: {
        name: string;
        status: string;
        durationMs?: number;
      };
    };
    output: unknown;
  };
  /** List connected workers */
  "engine::workers::list": {
    input: Record<string, never>;
    output: unknown;
  };
  /** An agent's chain of command, itself first, root last: {chain} (empty outside the chart) */
  "hierarchy::chain": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: {
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
  };
  /** Remove an agent from the org chart; its reports move up to its manager */
  "hierarchy::delete": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: {
      deleted: boolean;
    };
  };
  /** Nodes holding a capability (whole word, any case): {matches, count} */
  "hierarchy::find": {
    input: {
      realmId: string;
      capability: string;
    };
    output: {
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
  };
  /** Take a deleted agent out of the org chart, its reports moving up (part of an agent delete) */
  "hierarchy::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete a realm's org chart (part of a realm delete); idempotent */
  "hierarchy::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Place an agent in the org chart; omitted fields keep their values. Returns the node */
  "hierarchy::set": {
    input: {
      realmId: string;
      agentId: string;
      reportsTo?: string | null;
      title?: string;
      capabilities?: string[];
      rank?: number;
    };
    output: {
      realmId: string;
      agentId: string;
      reportsTo: string | null;
      title: string;
      capabilities: string[];
      /** 1 is the most senior */
      rank: number;
    };
  };
  /** The org chart as nested {roots: [{agentId, title, capabilities, rank, reports}]} */
  "hierarchy::tree": {
    input: {
      realmId: string;
      rootAgentId?: string;
    };
    output: {
      roots: HierarchyTreeNode[];
    };
  };
  /** The integrations and their tool functions: {integrations: [{name, status, functions, source?, error?}]}. A realm key sees those its realm may call. */
  "integration::list": {
    input: Record<string, never>;
    output: {
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
  };
  /** Read integrations/*.toml again and connect what changed (admin): the report */
  "integration::reload": {
    input: Record<string, never>;
    output: {
      connected: string[];
      unchanged: string[];
      pending: string[];
      removed: string[];
      problems: {
        file: string;
        message: string;
      }[];
    };
  };
  /** Check the integrations/*.toml of a directory without connecting (admin): {integrations, problems} */
  "integration::validate": {
    input: {
      directory: string;
    };
    output: {
      integrations: string[];
      problems: {
        file: string;
        message: string;
      }[];
    };
  };
  /** Add the next version of an entity to an agent's graph */
  "kg::add_temporal": {
    input: {
      agentId: string;
      entity: string;
      type: string;
      properties?: Record<string, unknown>;
      relations?: {
        target: string;
        type: string;
      }[];
    };
    output: {
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
  };
  /** An entity at timestamp1 against timestamp2: {added, removed, modified} */
  "kg::diff": {
    input: {
      agentId: string;
      entity: string;
      timestamp1: number;
      timestamp2: number;
    };
    output: {
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
  };
  /** Delete a deleted agent's graph (agent delete) */
  "kg::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete the graphs of a realm's agents (realm delete) */
  "kg::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** An entity and what it reaches within depth, now or over a time range: its versions */
  "kg::query_temporal": {
    input: {
      agentId: string;
      entity: string;
      depth?: number;
      timeRange?: {
        from: number;
        to: number;
      };
      relationFilter?: string[];
    };
    output: {
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
  };
  /** {totalEntities, totalRelations, avgDegree, connectedComponents} of an agent's graph */
  "kg::stats": {
    input: {
      agentId: string;
    };
    output: {
      totalEntities: number;
      totalRelations: number;
      avgDegree: number;
      connectedComponents: number;
    };
  };
  /** Delete knowledge-graph versions superseded older than the retention (cron, internal): {deleted} */
  "kg::sweep_retention": {
    input: Record<string, unknown>;
    output: {
      deleted: number;
    };
  };
  /** Every version of an entity, oldest first */
  "kg::timeline": {
    input: {
      agentId: string;
      entity: string;
    };
    output: {
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
  };
  /** Breadth-first from an entity: {adjacency, paths, nodeCount} */
  "kg::traverse": {
    input: {
      agentId: string;
      startEntity: string;
      direction?: "incoming" | "outgoing" | "both";
      maxDepth?: number;
      maxNodes?: number;
    };
    output: {
      /** Each expanded entity's neighbours */
      adjacency: Record<string, string[]>;
      /** A shortest path from the start to each entity reached */
      paths: Record<string, string[]>;
      nodeCount: number;
    };
  };
  /** May the agent spend? Its own budget and the realm's both apply; the tighter one is reported */
  "ledger::check": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: {
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
  };
  /** The cost.incurred subscription: records a cost not marked recorded (ledger::record_cost) */
  "ledger::on_cost_incurred": {
    input: {
      recorded?: boolean;
      [key: string]: unknown;
    };
    output: unknown;
  };
  /** Delete a deleted agent's budget (agent delete); its spend history and the totals stay */
  "ledger::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete every budget, spend event and total of a realm (realm delete) */
  "ledger::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Record a model call's cost (a cost.incurred message, extra fields ignored); counted once by eventId */
  "ledger::record_cost": {
    input: {
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
      recorded?: boolean;
    };
    output: unknown;
  };
  /** Create or update a monthly budget, per agent or realm-wide (agentId absent) */
  "ledger::set_budget": {
    input: {
      realmId: string;
      agentId?: string;
      monthlyCents: number;
      softThreshold?: number;
      hardLimit?: boolean;
      billingCode?: string | null;
      expectedVersion?: number;
    };
    output: {
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
  };
  /** Record a spend (cents, fractions kept to 6 places); 402 past a hard limit */
  "ledger::spend": {
    input: {
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
    };
    output: {
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
  };
  /** Spend totals of a realm, all time or for one month, broken down by a group */
  "ledger::summary": {
    input: {
      realmId: string;
      groupBy?: "agent" | "model" | "provider" | "billing_code";
      period?: string;
    };
    output: {
      totalCents: number;
      totalInputTokens: number;
      totalOutputTokens: number;
      eventCount: number;
      /** Cents by the asked group (agent, model, provider, billing code) */
      breakdown: Record<string, number>;
    };
  };
  /** Count the costs a dead process took but did not count (cron, internal) */
  "ledger::sweep_pending": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Embed whatever of an agent's memory has no vector for its model yet, in the background: the status as for memory::embedding_status */
  "memory::backfill": {
    input: {
      agentId: string;
    };
    output: {
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
  };
  /** Forget one memory of an agent (and its vectors): 404 when it has no such memory */
  "memory::delete": {
    input: {
      agentId: string;
      id: string;
    };
    output: unknown;
  };
  /** How far an agent's memory is embedded with its model: {agentId, model, entries, embedded, refused, pending, lastError} */
  "memory::embedding_status": {
    input: {
      agentId: string;
    };
    output: {
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
  };
  /** Delete every memory of an agent, vectors included (the agent-delete cascade): {deleted} */
  "memory::forget_agent": {
    input: {
      agentId: string;
    };
    output: {
      deleted: number;
    };
  };
  /** An agent's memories newest first, a page at a time: {memories, nextCursor} */
  "memory::list": {
    input: {
      agentId: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** The agent.lifecycle subscription: an agent's changed embedding model re-embeds its memory (internal) */
  "memory::on_agent_lifecycle": {
    input: {
      type: string;
      agentId: string;
      changed?: string[];
      [key: string]: unknown;
    };
    output: unknown;
  };
  /** An agent's memories best matching a free-text query {agentId, query, limit?, mode?: hybrid|text|vector}: {results: [entry + score in [0, 1] + relevance + matchedBy]} */
  "memory::recall": {
    input: {
      agentId: string;
      query: string;
      limit?: number;
      /** hybrid: words and meaning fused (the default when the agent has an embedding model); text: words only (the default without one); vector: meaning only (needs an embedding model) */
      mode?: "hybrid" | "text" | "vector";
    };
    output: {
      results: {
        id: string;
        agentId: string;
        sessionId: string | null;
        role: "user" | "assistant" | "system" | "tool" | "note";
        content: string;
        createdAt: string;
        /** How well the content matches the query, in [0, 1]: the larger of the words' similarity and the vectors' cosine (clipped at 0) */
        score: number;
        /** The rank score the results are ordered by: text mode the index's (relevance with recency); hybrid and vector the fused relevance with recency (see fusion.ts), in [0, 1] */
        relevance: number;
        /** Which searches found it */
        matchedBy: ("text" | "vector")[];
      }[];
    };
  };
  /** Take up the agents whose memory embeddings are pending and idle here (cron, internal): {woken} */
  "memory::resume_embeddings": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Remember {agentId, content, sessionId?, role?}; returns the entry (409 once the agent holds AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT) */
  "memory::store": {
    input: {
      agentId: string;
      content: string;
      sessionId?: string | null;
      role?: "user" | "assistant" | "system" | "tool" | "note";
    };
    output: {
      id: string;
      agentId: string;
      sessionId: string | null;
      role: "user" | "assistant" | "system" | "tool" | "note";
      content: string;
      createdAt: string;
    };
  };
  /** Remember several entries of an agent at once {agentId, entries: [{content, sessionId?, role?}]} (409 past AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: none is stored) */
  "memory::store_many": {
    input: {
      agentId: string;
      entries: {
        content: string;
        sessionId?: string | null;
        role?: "user" | "assistant" | "system" | "tool" | "note";
      }[];
    };
    output: {
      entries: {
        id: string;
        agentId: string;
        sessionId: string | null;
        role: "user" | "assistant" | "system" | "tool" | "note";
        content: string;
        createdAt: string;
      }[];
    };
  };
  /** Migrate a autogen project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::autogen": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Migrate a crewai project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::crewai": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Migrate a langchain project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::langchain": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Migrate a langgraph project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::langgraph": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Migrate a openclaw project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::openclaw": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Migrate a openfang project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did) */
  "migrate::openfang": {
    input: {
      dryRun?: boolean | ("true" | "false");
      /** the framework's configuration file or project directory (default: where scan finds it) */
      configPath?: string;
    };
    output: {
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
  };
  /** Every migration's report added up: {markdown} or {reports, aggregated: {reports, totals, byFramework, byType}} */
  "migrate::report": {
    input: {
      format?: "markdown" | "json";
    };
    output: {
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
  };
  /** Look for the six frameworks' configuration in baseDir and the directories directly inside it: {frameworks: [{framework, detected, configPath, version, migratable}], summary} */
  "migrate::scan": {
    input: {
      /** default: the home directory of the user the service runs as */
      baseDir?: string;
    };
    output: {
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
  };
  /** An agent takes a mission (from backlog, queued or blocked): atomic, of concurrent checkouts one wins */
  "mission::checkout": {
    input: {
      realmId: string;
      id: string;
      agentId: string;
    };
    output: {
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
  };
  /** Add a comment to a mission */
  "mission::comment": {
    input: {
      realmId: string;
      id: string;
      authorId: string;
      body: string;
    };
    output: {
      id: string;
      missionId: string;
      authorId: string;
      body: string;
      createdAt: string;
    };
  };
  /** Create a mission (status backlog, unassigned) */
  "mission::create": {
    input: {
      realmId: string;
      title: string;
      createdBy: string;
      description?: string;
      directiveId?: string;
      parentId?: string;
      priority?: string;
      billingCode?: string;
    };
    output: {
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
  };
  /** A mission with its newest 50 comments */
  "mission::get": {
    input: {
      realmId: string;
      id: string;
    };
    output: {
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
  };
  /** A realm's missions by priority then age, filtered by assigneeId, status, directiveId: {missions, count, nextCursor} */
  "mission::list": {
    input: {
      realmId: string;
      assigneeId?: string;
      status?: string;
      directiveId?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** A deleted agent's missions go back to the queue (part of an agent delete) */
  "mission::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete every mission of a realm with its comments (part of a realm delete); idempotent */
  "mission::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** The assignee gives a mission back: queued, unassigned */
  "mission::release": {
    input: {
      realmId: string;
      id: string;
      agentId: string;
    };
    output: {
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
  };
  /** Move a mission to another status (refused moves are a 409 naming both states) */
  "mission::transition": {
    input: {
      realmId: string;
      id: string;
      status: string;
      agentId?: string;
      reason?: string;
      expectedVersion?: number;
    };
    output: {
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
  };
  /** OpenAI-compatible chat completions (streaming included) */
  "openai::chat_completions": {
    input: unknown;
    output: {
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
  };
  /** OpenAI-compatible embeddings, passed through to providers that offer them */
  "openai::embeddings": {
    input: unknown;
    output: {
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
  };
  /** One OpenAI-compatible model: a catalog id or alias, or agent:<id> */
  "openai::model": {
    input: {
      model: string;
    };
    output: {
      id: string;
      object: "model";
      created: number;
      owned_by: string;
    };
  };
  /** OpenAI-compatible model list: catalog models and agents */
  "openai::models": {
    input: Record<string, never>;
    output: {
      object: "list";
      data: {
        id: string;
        object: "model";
        created: number;
        owned_by: string;
      }[];
    };
  };
  /** Publish {data} to every subscriber of {topic} */
  "publish": {
    input: {
      topic: string;
      data: unknown;
    };
    output: void;
  };
  /** Wake an agent now; returns the finished pulse run */
  "pulse::invoke": {
    input: {
      realmId: string;
      agentId: string;
      contextMode?: "Thin" | "Full" | "thin" | "full";
    };
    output: {
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
  };
  /** Stop and delete a deleted agent's pulse (internal) */
  "pulse::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Stop and delete every pulse of a realm (internal) */
  "pulse::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Schedule agent {agentId} of realm {realmId} on six-field {cron}; returns the pulse config */
  "pulse::register": {
    input: {
      realmId: string;
      agentId: string;
      cron: string;
      contextMode?: "Thin" | "Full" | "thin" | "full";
      contextGraph?: boolean;
      wakeOn?: "always" | "changes";
      timeoutSecs?: number;
      maxRetries?: number;
    };
    output: {
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
  };
  /** An agent's pulse: {config, recentRuns (newest first), lastTick} */
  "pulse::status": {
    input: {
      realmId: string;
      agentId: string;
      limit?: number;
    };
    output: {
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
  };
  /** Align this node's cron trigger for an agent with its stored pulse (internal) */
  "pulse::sync": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** One cron tick of an agent's pulse (internal) */
  "pulse::tick": {
    input: {
      realmId: string;
      agentId: string;
      job_id?: string;
      [key: string]: unknown;
    };
    output: unknown;
  };
  /** Enable or disable an agent's pulse: {enabled} */
  "pulse::toggle": {
    input: {
      realmId: string;
      agentId: string;
      enabled: boolean;
    };
    output: {
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
  };
  /** Create a realm (admin): {name, owner, ...} */
  "realm::create": {
    input: {
      name: string;
      owner: string;
      description?: string;
      defaultModel?: string;
      maxAgents?: number;
      metadata?: Record<string, unknown>;
    };
    output: {
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
  };
  /** Delete a realm (admin) with all its agents, directives, missions, budgets, pulses, ... */
  "realm::delete": {
    input: {
      id: string;
    };
    output: {
      deleted: boolean;
    };
  };
  /** A realm with its agents, directives and hierarchy; secrets only with scrubSecrets false */
  "realm::export": {
    input: {
      id: string;
      scrubSecrets?: boolean;
    };
    output: {
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
  };
  /** A realm by {id} */
  "realm::get": {
    input: {
      id: string;
    };
    output: {
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
  };
  /** Create a realm from an export document {data, newOwner?} (admin): {imported, realmId} */
  "realm::import": {
    input: {
      data: Record<string, unknown>;
      newOwner?: string;
    };
    output: {
      imported: boolean;
      realmId: string;
    };
  };
  /** Every realm the caller may see, oldest first: {realms, nextCursor} (the route: a bare array) */
  "realm::list": {
    input: {
      limit?: number;
      cursor?: string;
    };
    output: {
      realms: {
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
      /** Pass as `cursor` for the next page; null on the last */
      nextCursor: string | null;
    };
  };
  /** Change a realm's name, description, status, defaultModel, maxAgents, metadata (null clears); status moves Active⇄Paused, → Archived */
  "realm::update": {
    input: {
      id: string;
      name?: string;
      description?: string | null;
      status?: "Active" | "Paused" | "Archived";
      defaultModel?: string | null;
      maxAgents?: number | null;
      metadata?: Record<string, unknown> | null;
    };
    output: {
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
  };
  /** How many documents a scope holds: {count} */
  "search::count": {
    input: {
      index: string;
      scope: string;
    };
    output: unknown;
  };
  /** Remove a document: {deleted: true} when it existed */
  "search::delete": {
    input: {
      index: string;
      scope: string;
      id: string;
    };
    output: unknown;
  };
  /** Remove every document of a scope: {deleted: count} */
  "search::delete_scope": {
    input: {
      index: string;
      scope: string;
    };
    output: unknown;
  };
  /** Those of ids that are documents of the scope: {items: [{id, data, createdAt}]}, in no order */
  "search::get": {
    input: {
      index: string;
      scope: string;
      ids: string[];
    };
    output: unknown;
  };
  /** A scope's documents newest first, a page at a time: {items: [{id, data, createdAt}], nextCursor} */
  "search::list": {
    input: {
      index: string;
      scope: string;
      limit?: number;
      cursor?: string;
    };
    output: unknown;
  };
  /** Index a document {index, scope, id, text, data?, createdAt?}; replaces one with the same id */
  "search::put": {
    input: {
      index: string;
      scope: string;
      id: string;
      text: string;
      data?: unknown;
      createdAt?: string;
    };
    output: unknown;
  };
  /** Index several documents of one scope {index, scope, docs: [{id, text, data?, createdAt?}]}, each as search::put */
  "search::put_many": {
    input: {
      index: string;
      scope: string;
      docs: {
        id: string;
        text: string;
        data?: unknown;
        createdAt?: string;
      }[];
    };
    output: unknown;
  };
  /** Free-text search in one scope, best first by BM25 relevance and recency: {results} */
  "search::query": {
    input: {
      index: string;
      scope: string;
      query: string;
      limit?: number;
      recencyHalfLifeMs?: number;
      /** true: a candidate list for fusion with another list (hybrid recall): the best of the scope's newest matches and of the older ones holding a rare word, not the best of every match */
      candidates?: boolean;
    };
    output: unknown;
  };
  /** Append {type, agentId?, detail?} to the audit chain */
  "security::audit": {
    input: {
      type: string;
      agentId?: string;
      detail?: Record<string, unknown>;
    };
    output: unknown;
  };
  /** Records a message published on topic `audit` (extra members are kept in detail) */
  "security::audit_event": {
    input: {
      type: string;
      agentId?: string | null;
      detail?: Record<string, unknown> | null;
      [key: string]: unknown;
    };
    output: unknown;
  };
  /** Audit entries, newest first (order=asc for oldest), filtered by type, agentId, from, to */
  "security::audit_query": {
    input: {
      type?: string;
      agentId?: string;
      from?: string;
      to?: string;
      order?: "asc" | "desc";
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Verify the audit chain: {valid, length, brokenAt, reason?} */
  "security::audit_verify": {
    input: Record<string, never>;
    output: {
      valid: boolean;
      length: number;
      brokenAt: number | null;
      reason?: string;
    };
  };
  /** Several set/update/delete ops in one transaction: all applied in order, or none (a conflict fails all) */
  "state::batch": {
    input: {
      ops: ({
        type: "set";
        scope: string;
        key: string;
        value: unknown;
        expectedVersion?: number;
      } | {
        type: "update";
        scope: string;
        key: string;
        ops: ({
          type: "set";
          path: string | string[];
          value: unknown;
        } | {
          type: "merge";
          path?: string | string[];
          value: Record<string, unknown>;
        } | {
          type: "increment";
          path: string | string[];
          by?: number;
        } | {
          type: "decrement";
          path: string | string[];
          by?: number;
        } | {
          type: "append";
          path?: string | string[];
          value: unknown;
        } | {
          type: "remove";
          path: string | string[];
        })[];
        expectedVersion?: number;
      } | {
        type: "delete";
        scope: string;
        key: string;
        expectedVersion?: number;
      })[];
    };
    output: unknown;
  };
  /** Delete a key; returns the previous value or null */
  "state::delete": {
    input: {
      scope: string;
      key: string;
      expectedVersion?: number;
    };
    output: unknown;
  };
  /** Read a value; null when missing. withVersion: {value, version, updatedAt} */
  "state::get": {
    input: {
      scope: string;
      key: string;
      withVersion?: boolean;
    };
    output: unknown;
  };
  /** List records of a scope in key order, filtered by prefix, paginated by cursor */
  "state::list": {
    input: {
      scope: string;
      prefix?: string;
      limit?: number;
      cursor?: string;
    };
    output: unknown;
  };
  /** Every scope holding at least one key: {groups} (as iii answers it) */
  "state::list_groups": {
    input: Record<string, never>;
    output: unknown;
  };
  /** Write a value; with expectedVersion only when the stored version matches (0 = absent) */
  "state::set": {
    input: {
      scope: string;
      key: string;
      value: unknown;
      expectedVersion?: number;
    };
    output: unknown;
  };
  /** Apply set/merge/increment/decrement/append/remove ops atomically */
  "state::update": {
    input: {
      scope: string;
      key: string;
      ops: ({
        type: "set";
        path: string | string[];
        value: unknown;
      } | {
        type: "merge";
        path?: string | string[];
        value: Record<string, unknown>;
      } | {
        type: "increment";
        path: string | string[];
        by?: number;
      } | {
        type: "decrement";
        path: string | string[];
        by?: number;
      } | {
        type: "append";
        path?: string | string[];
        value: unknown;
      } | {
        type: "remove";
        path: string | string[];
      })[];
      expectedVersion?: number;
    };
    output: unknown;
  };
  /** A member's observation, proposal or vote (for, against, abstain; the latest counts) */
  "swarm::broadcast": {
    input: {
      swarmId: string;
      agentId: string;
      message: string;
      type: "observation" | "proposal" | "vote";
      vote?: "for" | "against" | "abstain";
    };
    output: {
      acknowledged: boolean;
      swarmId: string;
      seq: number;
    };
  };
  /** Every message: {totalMessages, observations, proposals, votes, agents} */
  "swarm::collect": {
    input: {
      swarmId: string;
    };
    output: {
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
  };
  /** Whether the members agree on a proposal: {hasConsensus, votesFor, votesAgainst, threshold, totalVoters} */
  "swarm::consensus": {
    input: {
      swarmId: string;
      proposal: string;
    };
    output: {
      proposal: string;
      hasConsensus: boolean;
      votesFor: number;
      votesAgainst: number;
      threshold: number;
      totalVoters: number;
    };
  };
  /** Start a swarm of a realm's agents on a goal: {swarmId, ...} */
  "swarm::create": {
    input: {
      goal: string;
      agentIds: string[];
      maxDurationMs?: number;
      consensusThreshold?: number;
      realmId?: string;
    };
    output: {
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
  };
  /** End a swarm; each member's findings go to its memory (session swarm:<id>) */
  "swarm::dissolve": {
    input: {
      swarmId: string;
    };
    output: {
      swarmId: string;
      status: "active" | "dissolved" | "expired";
      messageCount: number;
      /** Members whose findings were kept in their memory */
      archived: number;
    };
  };
  /** A realm's swarms, newest first, filtered by status: {swarms, count, nextCursor} */
  "swarm::list": {
    input: {
      realmId?: string;
      status?: "active" | "dissolved" | "expired";
      limit?: number;
      cursor?: string;
    };
    output: {
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
  };
  /** Delete a realm's swarms and their messages */
  "swarm::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Let the swarm run itself: each member agent, in parallel, weighs in on the goal each round until consensus */
  "swarm::run": {
    input: {
      swarmId: string;
      rounds?: number;
    };
    output: {
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
  };
  /** A swarm: its goal, members, status and message count */
  "swarm::status": {
    input: {
      swarmId: string;
    };
    output: {
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
  };
  /** Expire the swarms whose time is up (each second, on one node; internal) */
  "swarm::sweep": {
    input: unknown;
    output: unknown;
  };
  /** Delete ended swarms (with their messages) older than the retention (cron, internal): {deleted} */
  "swarm::sweep_retention": {
    input: Record<string, unknown>;
    output: {
      deleted: number;
    };
  };
  /** Hand a task (with optional context) to another agent of your realm and get its result: {result}. */
  "tool::agent_delegate": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      to: string;
      task: string;
      context?: string;
    };
    output: unknown;
  };
  /** The agents of your realm: {agents: [{id, name, status, model}]}. */
  "tool::agent_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Send a message to another agent of your realm and get its answer: {response}. At most 10 per target and minute. */
  "tool::agent_send": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      to: string;
      message: string;
    };
    output: unknown;
  };
  /** Create a sub-agent in your realm (at most 20 under you and your sub-agents together, nested at most 3 deep) that can do no more than you can, optionally give it a first message: {agentId, response}. */
  "tool::agent_spawn": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      name: string;
      systemPrompt?: string;
      model?: string;
      toolProfile?: "chat" | "code" | "research" | "ops" | "data" | "full";
      /** A first message; its answer is returned */
      message?: string;
    };
    output: unknown;
  };
  /** Call an HTTP API: {status, headers, body (parsed when JSON), truncated}. body may be text or a JSON value (sent as application/json). Retries network failures and 429/502/503/504 up to retries times. Loopback, private and link-local addresses are refused. */
  "tool::api_call": {
    input: {
      url: string;
      method?: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";
      headers?: Record<string, string>;
      /** Added to the URL's query string */
      query?: Record<string, string>;
      body?: unknown;
      timeoutMs?: number;
      retries?: number;
    };
    output: unknown;
  };
  /** Apply a unified diff (as git diff or diff -u write it) to files of your workspace. Every context and removed line is verified; if any hunk does not match, nothing is written and the error names the line. Creates (--- /dev/null) and deletes (+++ /dev/null) files. */
  "tool::apply_patch": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** The unified diff */
      patch: string;
    };
    output: unknown;
  };
  /** Transcribe speech (a workspace audio file or a URL) with a speech provider (OpenAI, else Groq): {text, provider}. */
  "tool::audio_transcribe": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Media file, relative to your workspace */
      path?: string;
      /** http(s) URL of the media */
      url?: string;
    };
    output: unknown;
  };
  /** Drive your browser session's page: action navigate (url), click (selector), type (selector, text; submit presses Enter), wait (for selector, or timeoutMs). Every request the page makes passes the SSRF rule. */
  "tool::browser_action": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
      action: "navigate" | "click" | "type" | "wait";
      /** http(s) URL */
      url?: string;
      /** CSS selector (or text=…, role=… as Playwright reads them) */
      selector?: string;
      text?: string;
      submit?: boolean;
    };
    output: unknown;
  };
  /** Click the element matching selector on your session's page: {url, title} afterwards. */
  "tool::browser_click": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
      /** CSS selector (or text=…, role=… as Playwright reads them) */
      selector: string;
    };
    output: unknown;
  };
  /** Close your browser session: {closed}. */
  "tool::browser_close": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Open a URL in your browser session (one page per agent, kept between calls): {url, status, title}. */
  "tool::browser_navigate": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
      /** http(s) URL */
      url: string;
    };
    output: unknown;
  };
  /** The visible text of your session's page: {url, title, text, truncated}. */
  "tool::browser_read_page": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      maxChars?: number;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** Screenshot a web page in a real browser: {screenshot: base64 PNG, width, height, url}. viewport {width, height} (default 1280×720, at most 4194304 pixels, e.g. 2048×2048), fullPage for the whole page (cut at 4 megapixels' worth of height). A PNG above 8 MB is refused. Without url, your open browser session's page. */
  "tool::browser_screenshot": {
    input: {
      /** http(s) URL */
      url?: string;
      /** The agent whose workspace (or data) the tool acts on */
      agentId?: string;
      viewport?: {
        width: number;
        height: number;
      };
      fullPage?: boolean;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** Type text into the field matching selector on your session's page (submit presses Enter). */
  "tool::browser_type": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** How long to wait, in ms (default 15000) */
      timeoutMs?: number;
      /** CSS selector (or text=…, role=… as Playwright reads them) */
      selector: string;
      text: string;
      submit?: boolean;
    };
    output: unknown;
  };
  /** Send a message to a chat channel bound to you, named <platform>:<channel> (e.g. slack:C0123): {queued}; it is delivered through the platform with retries. At most 20 a minute. */
  "tool::channel_send": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      channel: string;
      message: string;
    };
    output: unknown;
  };
  /** Measure source code (a file, or every source file under a directory): lines, code, comments, blank, functions and cyclomatic complexity per file, with totals. */
  "tool::code_analyze": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File or directory, relative to your workspace */
      path?: string;
    };
    output: unknown;
  };
  /** Explain code with your own model (billed to you): a file of your workspace (path, optional line range) or code text, with an optional question. {explanation}. */
  "tool::code_explain": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path?: string;
      code?: string;
      fromLine?: number;
      toLine?: number;
      question?: string;
    };
    output: unknown;
  };
  /** Format a source file in place with the formatter installed for its kind (biome or prettier for JS/TS/JSON/CSS/Markdown, ruff or black for Python, rustfmt, gofmt, shfmt): {path, formatter, changed}. */
  "tool::code_format": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
    };
    output: unknown;
  };
  /** Lint a source file with the linter installed for its kind (biome or eslint, ruff or pylint, go vet, shellcheck): {path, linter, clean, problems (parsed JSON when the linter gives it), output}. */
  "tool::code_lint": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
    };
    output: unknown;
  };
  /** Run your project's tests in your workspace: command is one of npm, npx, node, bun, deno, python3, python, pytest, cargo, go, make with args (e.g. npm ["test"], pytest ["-q"]). {passed, exitCode, stdout, stderr, timedOut, durationMs}. */
  "tool::code_test": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      command: string;
      args?: string[];
      /** Milliseconds before the command and its children are killed (default 120000) */
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** Run up to 10 of your tools in sequence, each step's args may use {{input.x}} (compose's input), {{prev.x}} (the previous step's result) and {{steps.N.x}}: {results, output (the last result)}. Stops at the first failing step. */
  "tool::compose": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      input?: unknown;
      steps: {
        tool: string;
        args?: Record<string, unknown>;
      }[];
    };
    output: unknown;
  };
  /** Schedule a recurring task for yourself: at every time the cron expression (UTC; 5 fields, or 6 with seconds; at most once a minute) names, you receive message in session cron:<jobId>; a time that comes while the previous one's turn is still under way is skipped. {job}. */
  "tool::cron_create": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** e.g. 0 9 * * 1-5 */
      schedule: string;
      /** What you will be told when it fires */
      message: string;
      name?: string;
    };
    output: {
      job: {
        id: string;
        kind: "cron" | "reminder";
        name: string;
        agentId: string;
        realmId: string;
        schedule: string | null;
        message: string;
        workflowId?: string;
        status: "scheduled" | "done";
        nextRunAt: string | null;
        lastRunAt: string | null;
        lastError: string | null;
        runningSince?: string | null;
        skipped?: number;
        runs: number;
        createdAt: string;
      };
    };
  };
  /** Delete one of your scheduled jobs (recurring or reminder); it never fires again. {deleted}. */
  "tool::cron_delete": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      jobId: string;
    };
    output: unknown;
  };
  /** Your scheduled jobs (recurring tasks and reminders): {jobs: [{id, kind, schedule, message, nextRunAt, lastRunAt, runs, status}]}. */
  "tool::cron_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Parse CSV (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes). header: true (default) gives {columns, rows: [objects]}, false gives {rows: [arrays]}. */
  "tool::csv_parse": {
    input: {
      text: string;
      delimiter?: string;
      header?: boolean;
    };
    output: unknown;
  };
  /** Disk space of the file system holding your workspace ({totalBytes, freeBytes, usedPercent}) and how much your workspace takes. */
  "tool::disk_usage": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Read an environment variable of the service; only these are readable: LANG, LC_ALL, TZ, NODE_ENV, AGENTOS_ENGINE_PORT, AGENTOS_HOST. */
  "tool::env_get": {
    input: {
      name: string;
    };
    output: unknown;
  };
  /** List a directory of your workspace: {path, entries: [{path, type, size, modified}], truncated}. recursive walks subdirectories (links are listed, not followed). */
  "tool::file_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Directory, relative to your workspace */
      path?: string;
      recursive?: boolean;
      maxEntries?: number;
    };
    output: unknown;
  };
  /** Read a file of your workspace: {path, content, size, encoding, truncated}. Text comes as UTF-8, other bytes as base64. Use offset and maxBytes for large files. */
  "tool::file_read": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      /** Byte offset to start reading at */
      offset?: number;
      /** Most bytes to return */
      maxBytes?: number;
    };
    output: unknown;
  };
  /** Write a file in your workspace (parent directories are created): {path, bytes}. content is UTF-8 text, or base64 with encoding: base64; append adds to the end. */
  "tool::file_write": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      /** What to write */
      content: string;
      encoding?: "utf8" | "base64";
      /** Add to the end instead of replacing the file */
      append?: boolean;
    };
    output: unknown;
  };
  /** Commit in your workspace's repository: stages files (all changes when omitted) and commits with message, authored by you. init: true creates the repository first if there is none. {commit, summary}. */
  "tool::git_commit": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Repository directory, relative to your workspace */
      repo?: string;
      message: string;
      /** Paths to stage; all changes when omitted */
      files?: string[];
      init?: boolean;
    };
    output: unknown;
  };
  /** Unified diff of your workspace's repository: unstaged changes, or staged ones with staged: true; paths limits it. {diff, truncated}. */
  "tool::git_diff": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Repository directory, relative to your workspace */
      repo?: string;
      staged?: boolean;
      paths?: string[];
    };
    output: unknown;
  };
  /** Commits of your workspace's repository, newest first: [{sha, author, date, subject}]; path limits it to one file. */
  "tool::git_log": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Repository directory, relative to your workspace */
      repo?: string;
      maxCount?: number;
      /** File path, relative to your workspace */
      path?: string;
    };
    output: unknown;
  };
  /** The git repository of your workspace: {branch, clean, changes: [{status, path}], recent: last 10 commits}. */
  "tool::git_status": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Repository directory, relative to your workspace */
      repo?: string;
    };
    output: unknown;
  };
  /** Hash text, or a file of your workspace (agentId + path): {algorithm, hash} in hex or base64. */
  "tool::hash_compute": {
    input: {
      algorithm?: "sha256" | "sha512" | "sha1" | "md5";
      text?: string;
      /** The agent whose workspace (or data) the tool acts on */
      agentId?: string;
      /** File path, relative to your workspace */
      path?: string;
      encoding?: "hex" | "base64";
    };
    output: unknown;
  };
  /** What tool::hashline_edit would change, as a unified diff, without writing: {path, diff}. */
  "tool::hashline_diff": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      edits: {
        /** Line number as hashline_read showed it */
        line: number;
        /** That line's hash */
        hash: string;
        op: "replace" | "delete" | "insert_after";
        /** New text (replace, insert_after) */
        content?: string;
      }[];
    };
    output: unknown;
  };
  /** Edit a text file by hash-anchored lines from tool::hashline_read: each edit names {line, hash, op: replace|delete|insert_after, content}. If any named line changed since it was read, nothing is written. Returns {path, diff}. */
  "tool::hashline_edit": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      edits: {
        /** Line number as hashline_read showed it */
        line: number;
        /** That line's hash */
        hash: string;
        op: "replace" | "delete" | "insert_after";
        /** New text (replace, insert_after) */
        content?: string;
      }[];
    };
    output: unknown;
  };
  /** Read a text file as numbered, hash-anchored lines `N:hash|text` for tool::hashline_edit: {path, lines, totalLines}. */
  "tool::hashline_read": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      fromLine?: number;
      maxLines?: number;
    };
    output: unknown;
  };
  /** Look at an image (a workspace file or a URL) with your own model, which must support images, and answer question: {answer}. */
  "tool::image_analyze": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Media file, relative to your workspace */
      path?: string;
      /** http(s) URL of the media */
      url?: string;
      question?: string;
    };
    output: unknown;
  };
  /** Turn a description into a detailed prompt for an image generator (with your own model): {prompt}. */
  "tool::image_generate_prompt": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      description: string;
      style?: string;
    };
    output: unknown;
  };
  /** Run a jq expression over JSON: paths (.a.b, .[0], .[], .[1:3]), pipes |, select(.x > 1), map(f), sort_by(f), group_by(f), keys, length, add, {name: .n}, [ ... ], // defaults and more. data is JSON text or a value. {results: every output}. */
  "tool::json_transform": {
    input: {
      /** The JSON input (a JSON text or any value) */
      data: unknown;
      /** jq expression, e.g. [.items[] | select(.price > 10) | .name] */
      expression: string;
    };
    output: unknown;
  };
  /** Record a fact in your knowledge graph: an entity (name, type, properties) and its relations to other entities. Adding an entity again makes a new version; the old one stays in its history. */
  "tool::kg_add": {
    input: {
      agentId: string;
      entity: string;
      type: string;
      properties?: Record<string, unknown>;
      relations?: {
        target: string;
        type: string;
      }[];
    };
    output: {
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
  };
  /** Look up an entity in your knowledge graph with what it is related to within depth steps; give timeRange {from, to} in epoch ms for what held back then. */
  "tool::kg_query": {
    input: {
      agentId: string;
      entity: string;
      depth?: number;
      timeRange?: {
        from: number;
        to: number;
      };
      relationFilter?: string[];
    };
    output: {
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
  };
  /** A Mermaid diagram of an entity's neighbourhood in your knowledge graph (depth 1–3). */
  "tool::kg_visualize": {
    input: {
      agentId: string;
      entity: string;
      depth?: number;
    };
    output: {
      mermaid: string;
    };
  };
  /** Compiler errors and warnings for a file from its language server (TypeScript/JavaScript, Python, Go, Rust): {diagnostics: [{line, column, severity, code, message}]}. */
  "tool::lsp_diagnostics": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
    };
    output: unknown;
  };
  /** Where a symbol is defined (give line/column or the symbol's name): {definitions: [{path, line, column, text}]}; definitions outside your workspace are named by file only. */
  "tool::lsp_goto_definition": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      /** 1-based line of the symbol */
      line?: number;
      /** 1-based column of the symbol */
      column?: number;
      /** The symbol's name: its first occurrence in the file is used when line/column are not given */
      symbol?: string;
    };
    output: unknown;
  };
  /** Every reference to a symbol across your workspace (give line/column or the symbol's name): {references: [{path, line, column, text}]}. */
  "tool::lsp_references": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      /** 1-based line of the symbol */
      line?: number;
      /** 1-based column of the symbol */
      column?: number;
      /** The symbol's name: its first occurrence in the file is used when line/column are not given */
      symbol?: string;
    };
    output: unknown;
  };
  /** Rename a symbol everywhere in your workspace, as the language server resolves it (give line/column or the symbol's name): {files: [{path, edits}]}. */
  "tool::lsp_rename": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
      /** 1-based line of the symbol */
      line?: number;
      /** 1-based column of the symbol */
      column?: number;
      /** The symbol's name: its first occurrence in the file is used when line/column are not given */
      symbol?: string;
      newName: string;
    };
    output: unknown;
  };
  /** The symbols a file declares (functions, classes, variables, …) with where they are: {symbols: [{name, kind, line, column, container}]}. */
  "tool::lsp_symbols": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** File path, relative to your workspace */
      path: string;
    };
    output: unknown;
  };
  /** Download a file (at most 52428800 bytes) by http(s) URL into your workspace: {path, bytes, contentType}. Loopback, private and link-local addresses are refused. */
  "tool::media_download": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      url: string;
      /** Where to save it, relative to your workspace */
      path?: string;
    };
    output: unknown;
  };
  /** The fact you stored under key with tool::memory_store: {key, content, updatedAt}. */
  "tool::memory_recall": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** A name to recall it by exactly */
      key: string;
    };
    output: unknown;
  };
  /** Search your memories (conversations and stored facts) by words, best first by relevance and recency: {results: [{content, score, createdAt}]}. */
  "tool::memory_search": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      query: string;
      limit?: number;
    };
    output: unknown;
  };
  /** Remember a fact. With key it can be recalled exactly by that key (storing the key again replaces it; at most 1000 keys); it is also found by tool::memory_search. {id, key}. */
  "tool::memory_store": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      content: string;
      /** A name to recall it by exactly */
      key?: string;
    };
    output: unknown;
  };
  /** Whether a host answers: resolves it and opens a TCP connection to port (default 443) within timeoutMs. {reachable, addresses, latencyMs, error}. Private and loopback addresses are refused. */
  "tool::network_check": {
    input: {
      /** Host name or IP address */
      host: string;
      port?: number;
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** The processes running in your workspace (started by your commands): [{pid, command, args, rssBytes, state}]. */
  "tool::process_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Test a JavaScript regular expression against text: {matches: [{match, index, groups}], count}. flags like g, i, m, s, u; runs for at most timeoutMs (a pattern that backtracks forever is stopped). */
  "tool::regex_test": {
    input: {
      pattern: string;
      flags?: string;
      text: string;
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** Remind yourself once: at (ISO time) or in inSeconds you receive "Reminder: <message>" in session cron:<jobId>. {job}. */
  "tool::schedule_reminder": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** What you will be told when it fires */
      message: string;
      at?: string;
      inSeconds?: number;
    };
    output: unknown;
  };
  /** Run a program in your workspace (it sees the workspace at /workspace, a private /tmp and the system's programs; no network unless the agent is granted egress) without a shell: command is a bare program name from the allowlist (ls, cat, grep, git, node, python3, npm, make, …), args its arguments (no pipes, redirects or globs). Returns {exitCode, stdout, stderr, truncated, timedOut, durationMs}; the program and its children are killed at the timeout. */
  "tool::shell_exec": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      /** Program name, e.g. ls or npm */
      command: string;
      /** Arguments, one per item */
      args?: string[];
      /** Text given to the program on stdin */
      stdin?: string;
      /** Milliseconds before the command and its children are killed (default 60000) */
      timeoutMs?: number;
    };
    output: unknown;
  };
  /** Save your workspace's files and your todo list as a snapshot you can restore later (at most 20, together no larger than your workspace's quota): {snapshot}. */
  "tool::snapshot_create": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      label?: string;
    };
    output: unknown;
  };
  /** Delete one of your snapshots, freeing its place and its bytes: {deleted}. */
  "tool::snapshot_delete": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      snapshotId: string;
    };
    output: unknown;
  };
  /** Your snapshots, oldest first: {snapshots: [{id, label, createdAt, files, bytes}]}. */
  "tool::snapshot_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
    };
    output: unknown;
  };
  /** Put your workspace's files and your todo list back as a snapshot saved them (what changed since is replaced): {restored}. */
  "tool::snapshot_restore": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      snapshotId: string;
    };
    output: unknown;
  };
  /** Build a parameterised SQL statement (never executed): select, insert, update or delete with quoted identifiers and placeholders for every value. {sql, params}. */
  "tool::sql_build": {
    input: {
      operation: "select" | "insert" | "update" | "delete";
      table: string;
      dialect?: "postgres" | "sqlite" | "mysql";
      /** select: the columns (default *) */
      columns?: string[];
      /** insert and update: column → value */
      values?: Record<string, string | number | boolean | null>;
      /** column → value (equality) or {op, value}; all must hold */
      where?: Record<string, (string | number | boolean | null) | {
          op: "=" | "!=" | "<" | "<=" | ">" | ">=" | "like" | "in" | "is null" | "is not null";
          value?: (string | number | boolean | null) | (string | number | boolean | null)[];
        }>;
      orderBy?: {
        column: string;
        direction?: "asc" | "desc";
      }[];
      limit?: number;
      offset?: number;
    };
    output: unknown;
  };
  /** The host's OS, CPUs, memory, load and uptime. */
  "tool::system_info": {
    input: Record<string, never>;
    output: unknown;
  };
  /** Add an item to your todo list: {todo}. status open, priority normal unless given. */
  "tool::todo_create": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      title: string;
      description?: string | null;
      priority?: "low" | "normal" | "high";
      due?: string | null;
    };
    output: unknown;
  };
  /** Remove a todo item: {deleted}. */
  "tool::todo_delete": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      todoId: string;
    };
    output: unknown;
  };
  /** Your todo items, optionally of one status, oldest first: {todos}. */
  "tool::todo_list": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      status?: "open" | "in_progress" | "done" | "cancelled";
    };
    output: unknown;
  };
  /** Change a todo item (title, description, status open|in_progress|done|cancelled, priority, due): {todo}. */
  "tool::todo_update": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      todoId: string;
      title?: string;
      description?: string | null;
      status?: "open" | "in_progress" | "done" | "cancelled";
      priority?: "low" | "normal" | "high";
      due?: string | null;
    };
    output: unknown;
  };
  /** Speak text with a speech provider (OpenAI) into an audio file of your workspace: {path, bytes, provider}. */
  "tool::tts_speak": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      text: string;
      voice?: string;
      format?: "mp3" | "wav" | "opus" | "aac" | "flac";
      /** Where to save the audio, relative to your workspace */
      path?: string;
    };
    output: unknown;
  };
  /** Random UUIDs (version 4): {uuids}. */
  "tool::uuid_generate": {
    input: {
      count?: number;
    };
    output: unknown;
  };
  /** Remove a document (and its vector) from a collection of yours: {deleted}. */
  "tool::vector_delete": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      namespace?: string;
      id: string;
    };
    output: unknown;
  };
  /** Search a collection of yours (namespace), best first: by meaning (cosine similarity of embeddings, over the documents stored since you have an embedding model) when you have one, else by words (BM25 with recency; also when the embedding provider fails). {results: [{id, text, metadata, score}], rankedBy: vector|text}. */
  "tool::vector_search": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      namespace?: string;
      query: string;
      limit?: number;
    };
    output: unknown;
  };
  /** Add a document to a searchable collection of yours (namespace; at most 100 collections of 10000 documents). With an embedding model (yours, or the service's) it is embedded and found by meaning; without one, by words (full-text BM25 with recency). Same id replaces. {id, namespace, rankedBy: vector|text}. */
  "tool::vector_store": {
    input: {
      /** The agent whose workspace (or data) the tool acts on */
      agentId: string;
      namespace?: string;
      id?: string;
      text: string;
      metadata?: Record<string, unknown>;
    };
    output: unknown;
  };
  /** Fetch a web page or file by http(s) URL and return {url, status, contentType, content, truncated}. HTML is converted to plain text (scripts, styles and tags removed). Content is cut at maxSize bytes (default 500000) and truncated is then true. Redirects are followed (at most 5); non-2xx statuses are returned, not errors. Loopback, private and link-local addresses are refused. */
  "tool::web_fetch": {
    input: {
      /** The http or https URL to fetch */
      url: string;
      /** Most bytes of the body to return (default 500000); longer content is cut */
      maxSize?: number;
    };
    output: unknown;
  };
  /** Search the web and return {results: [{title, url, content}], provider}. provider: duckduckgo (default, keyless, returns related topics only), brave or tavily (used when their API key is configured, otherwise duckduckgo answers and is named in provider). maxResults 1 to 20, default 5. */
  "tool::web_search": {
    input: {
      /** What to search for */
      query: string;
      /** duckduckgo (default, keyless, related topics only), brave or tavily (need an API key; duckduckgo is used when it is missing) */
      provider?: "duckduckgo" | "brave" | "tavily";
      /** How many results to return, 1 to 20 (default 5) */
      maxResults?: number;
    };
    output: unknown;
  };
  /** Parse YAML (1.2, anchors included) into JSON: {value}. Errors name the line and column. */
  "tool::yaml_parse": {
    input: {
      text: string;
    };
    output: unknown;
  };
  /** Before an agent's own call of a function outside tool:: (an MCP or HTTP integration's, a remote worker's, mission::…): waits for a decision when the agent's toolPolicies require approval for it; {required} */
  "tools::approval_gate": {
    input: {
      functionId: string;
      input: unknown;
    };
    output: {
      required: boolean;
    };
  };
  /** An agent's tool calls that wait for approval (or were decided): {approvals} */
  "tools::approvals": {
    input: {
      id: string;
      status?: "pending" | "approved" | "denied" | "expired";
    };
    output: {
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
  };
  /** Approve or deny an agent's pending tool call (admin, or a key of the agent's realm; never an agent): the waiting turn goes on */
  "tools::decide": {
    input: {
      id: string;
      callId: string;
      approve: boolean;
      reason?: string;
    };
    output: {
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
  };
  /** Delete a deleted agent's workspace, snapshots and tool data (agent delete) */
  "tools::purge_agent": {
    input: {
      realmId: string;
      agentId: string;
    };
    output: unknown;
  };
  /** Delete the workspaces and tool data of a realm's agents (realm delete) */
  "tools::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Schedule a workflow run for an agent at every time of a cron expression (admin; a declared hand that names steps): {job} */
  "tools::schedule_workflow": {
    input: {
      agentId: string;
      workflowId: string;
      schedule: string;
      input?: string;
      name?: string;
    };
    output: {
      job: {
        id: string;
        kind: "cron" | "reminder";
        name: string;
        agentId: string;
        realmId: string;
        schedule: string | null;
        message: string;
        workflowId?: string;
        status: "scheduled" | "done";
        nextRunAt: string | null;
        lastRunAt: string | null;
        lastError: string | null;
        runningSince?: string | null;
        skipped?: number;
        runs: number;
        createdAt: string;
      };
    };
  };
  /** Fire the scheduled jobs that are due (cron, internal) */
  "tools::sweep": {
    input: Record<string, unknown>;
    output: unknown;
  };
  /** Delete a secret */
  "vault::delete": {
    input: {
      key: string;
    };
    output: void;
  };
  /** Decrypt a secret: {key, value}, or null when missing (internal/admin only) */
  "vault::get": {
    input: {
      key: string;
    };
    output: {
      key: string;
      value: string;
    } | null;
  };
  /** Secret names and timestamps (never values) */
  "vault::list": {
    input: {
      prefix?: string;
    };
    output: {
      keys: {
        key: string;
        createdAt: string;
        updatedAt: string;
      }[];
      count: number;
    };
  };
  /** Store a secret {key, value}, encrypted; returns {key, createdAt, updatedAt} */
  "vault::set": {
    input: {
      key: string;
      value: string;
    };
    output: {
      key: string;
      createdAt: string;
      updatedAt: string;
    };
  };
  /** How many vectors a scope holds, of one model or of all, and how many ids were refused: {count, refused} */
  "vector::count": {
    input: {
      index: string;
      scope: string;
      model?: string;
    };
    output: {
      count: number;
      /** Ids refused by the provider (see vector::refuse), of the model or of all */
      refused: number;
    };
  };
  /** Remove an id's vectors of every model: {deleted: true} when there was one */
  "vector::delete": {
    input: {
      index: string;
      scope: string;
      id: string;
    };
    output: {
      deleted: boolean;
    };
  };
  /** Remove a scope's vectors of every model but one (a re-embedding done) {index, scope, model}: {deleted: count} */
  "vector::delete_other_models": {
    input: {
      index: string;
      scope: string;
      model: string;
    };
    output: {
      deleted: number;
    };
  };
  /** Remove every vector of a scope (all models): {deleted: count} */
  "vector::delete_scope": {
    input: {
      index: string;
      scope: string;
    };
    output: {
      deleted: number;
    };
  };
  /** Those of ids that have no vector for the model in the scope, in their order: {ids} */
  "vector::missing": {
    input: {
      index: string;
      scope: string;
      model: string;
      ids: string[];
    };
    output: {
      ids: string[];
    };
  };
  /** Store vectors of one scope and model atomically {index, scope, model, entries: [{id, vector}]}; an id's vector for the model is replaced */
  "vector::put_many": {
    input: {
      index: string;
      scope: string;
      model: string;
      entries: {
        id: string;
        vector: number[];
      }[];
    };
    output: {
      stored: number;
    };
  };
  /** The scope's ids nearest a vector among one model's vectors, best first: {results: [{id, score (cosine)}]} */
  "vector::query": {
    input: {
      index: string;
      scope: string;
      model: string;
      vector: number[];
      limit?: number;
      rescore?: number;
    };
    output: {
      results: {
        id: string;
        /** Cosine similarity with the query in [-1, 1] */
        score: number;
      }[];
    };
  };
  /** Record that the provider refused to embed these ids for the model (their content): vector::missing leaves them out until they are deleted {index, scope, model, ids}: {refused: count} */
  "vector::refuse": {
    input: {
      index: string;
      scope: string;
      model: string;
      ids: string[];
    };
    output: {
      refused: number;
    };
  };
  /** Cancel a running run: its running step is aborted and the run ends cancelled */
  "workflow::cancel": {
    input: {
      runId: string;
    };
    output: {
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
  };
  /** Check workflows/*.yaml of a directory without loading them (admin; config::validate): {workflows, problems} */
  "workflow::check_files": {
    input: {
      directory: string;
    };
    output: {
      workflows: {
        id: string;
        file: string;
      }[];
      problems: {
        file: string;
        message: string;
      }[];
    };
  };
  /** Store a new workflow definition in a realm (an existing id is a 409); returns {id, version} */
  "workflow::create": {
    input: {
      id?: string;
      realmId?: string;
      name: string;
      description?: string;
      steps: {
        name: string;
        functionId: string;
        mode?: "sequential" | "fanout" | "collect" | "conditional" | "loop";
        promptTemplate?: string;
        timeoutMs?: number;
        errorMode?: "fail" | "skip" | "retry";
        maxRetries?: number;
        outputVar?: string;
        condition?: string;
        maxIterations?: number;
        until?: string;
        args?: Record<string, unknown>;
        agentId?: string;
        optional?: boolean;
      }[];
    };
    output: {
      id: string;
      realmId: string;
      version: number;
    };
  };
  /** Delete a workflow and its run history */
  "workflow::delete": {
    input: {
      id: string;
      realmId?: string;
    };
    output: {
      deleted: boolean;
      id: string;
      realmId: string;
    };
  };
  /** One workflow definition, with missingFunctions: optional steps' functions not registered now */
  "workflow::get": {
    input: {
      id: string;
      realmId?: string;
    };
    output: {
      id: string;
      realmId: string;
      name: string;
      description?: string;
      steps: {
        name: string;
        functionId: string;
        mode?: "sequential" | "fanout" | "collect" | "conditional" | "loop";
        promptTemplate?: string;
        timeoutMs?: number;
        errorMode?: "fail" | "skip" | "retry";
        maxRetries?: number;
        outputVar?: string;
        condition?: string;
        maxIterations?: number;
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
  };
  /** One run with its step history */
  "workflow::get_run": {
    input: {
      runId: string;
    };
    output: {
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
  };
  /** A realm's workflow definitions by id: {workflows, nextCursor} (the route: a bare array) */
  "workflow::list": {
    input: {
      realmId?: string;
      limit?: number;
      cursor?: string;
    };
    output: {
      workflows: {
        id: string;
        realmId: string;
        name: string;
        description?: string;
        steps: {
          name: string;
          functionId: string;
          mode?: "sequential" | "fanout" | "collect" | "conditional" | "loop";
          promptTemplate?: string;
          timeoutMs?: number;
          errorMode?: "fail" | "skip" | "retry";
          maxRetries?: number;
          outputVar?: string;
          condition?: string;
          maxIterations?: number;
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
      /** Pass as `cursor` for the next page; null on the last */
      nextCursor: string | null;
    };
  };
  /** Read workflows/*.yaml of a directory into the default realm (admin): {loaded, unchanged, problems} */
  "workflow::load_files": {
    input: {
      directory: string;
    };
    output: {
      loaded: string[];
      unchanged: string[];
      problems: {
        file: string;
        message: string;
      }[];
    };
  };
  /** Delete every workflow of a realm with its runs (part of a realm delete); idempotent */
  "workflow::purge_realm": {
    input: {
      realmId: string;
    };
    output: unknown;
  };
  /** Resume a failed, interrupted or cancelled run from its last checkpoint, in the background */
  "workflow::retry": {
    input: {
      runId: string;
    };
    output: {
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
  };
  /** Run a workflow: {runId, status, results, vars}; with async: true, {runId, status} at once (202) */
  "workflow::run": {
    input: {
      workflowId: string;
      realmId?: string;
      input?: unknown;
      agentId?: string;
      async?: boolean;
    };
    output: {
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
  };
  /** A run's progress as server-sent events (status, step, then the final status) */
  "workflow::run_events": {
    input: unknown;
    output: unknown;
  };
  /** A workflow's runs, newest first: {runs, total, limit, offset} */
  "workflow::runs": {
    input: {
      id: string;
      realmId?: string;
      limit?: number;
      offset?: number;
    };
    output: {
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
  };
  /** Delete finished workflow runs (with their step results) older than the retention (cron, internal): {deleted} */
  "workflow::sweep_retention": {
    input: Record<string, unknown>;
    output: {
      deleted: number;
    };
  };
  /** Change a workflow (name, description, steps); the version goes up by one */
  "workflow::update": {
    input: {
      id: string;
      realmId?: string;
      name?: string;
      description?: string;
      steps?: {
        name: string;
        functionId: string;
        mode?: "sequential" | "fanout" | "collect" | "conditional" | "loop";
        promptTemplate?: string;
        timeoutMs?: number;
        errorMode?: "fail" | "skip" | "retry";
        maxRetries?: number;
        outputVar?: string;
        condition?: string;
        maxIterations?: number;
        until?: string;
        args?: Record<string, unknown>;
        agentId?: string;
        optional?: boolean;
      }[];
      expectedVersion?: number;
    };
    output: {
      id: string;
      realmId: string;
      name: string;
      description?: string;
      steps: {
        name: string;
        functionId: string;
        mode?: "sequential" | "fanout" | "collect" | "conditional" | "loop";
        promptTemplate?: string;
        timeoutMs?: number;
        errorMode?: "fail" | "skip" | "retry";
        maxRetries?: number;
        outputVar?: string;
        condition?: string;
        maxIterations?: number;
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
  };
}
