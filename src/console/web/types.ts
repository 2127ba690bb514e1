import type { Answers } from "./generated/answers.ts";

export type { HierarchyTreeNode } from "./generated/answers.ts";

/** What a routed function answers, as the service's OpenAPI document describes it (generated types). */
export type Answer<Id extends keyof Answers> = Answers[Id];

export type Item<List> = List extends readonly (infer Entry)[] ? Entry : never;

export type Agent = Item<Answer<"agent::list">["agents"]>;
export type AgentDetail = Answer<"agent::get">;
export type Model = Item<Answer<"catalog::models">>;
export type Session = Item<Answer<"agent::sessions">["sessions"]>;
export type Message = Item<Answer<"agent::session">["messages"]>;
export type ToolCall = Item<NonNullable<Message["toolCalls"]>>;
export type Workflow = Answer<"workflow::get">;
export type Step = Item<Workflow["steps"]>;
export type Run = Answer<"workflow::get_run">;
export type StepResult = Item<Run["results"]>;
