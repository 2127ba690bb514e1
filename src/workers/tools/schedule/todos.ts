import { z } from "zod";
import { casUpdate } from "../../../engine/state/cas.ts";
import { stateClient } from "../../../engine/state/client.ts";
import { nowIso } from "../../../shared/clock.ts";
import { notFound } from "../../../shared/errors.ts";
import { newId } from "../../../shared/ids.ts";
import { agentIdField } from "../fields.ts";
import { defineTool } from "../tool.ts";

export const todosScope = (agentId: string) => `tool_todos:${agentId}`;
const STATUSES = ["open", "in_progress", "done", "cancelled"] as const;
const PRIORITIES = ["low", "normal", "high"] as const;

interface Todo {
  id: string;
  title: string;
  description: string | null;
  status: (typeof STATUSES)[number];
  priority: (typeof PRIORITIES)[number];
  due: string | null;
  createdAt: string;
  updatedAt: string;
}

const fields = {
  title: z.string().trim().min(1, "title is required").max(500),
  description: z.string().max(10_000).nullable(),
  status: z.enum(STATUSES),
  priority: z.enum(PRIORITIES),
  due: z.iso.datetime({ offset: true, error: "due must be an ISO 8601 time" }).nullable(),
};

const todoCreate = defineTool({
  id: "tool::todo_create",
  actsFor: "agent",
  description: "Add an item to your todo list: {todo}. status open, priority normal unless given.",
  input: z.strictObject({
    agentId: agentIdField,
    title: fields.title,
    description: fields.description.optional(),
    priority: fields.priority.default("normal"),
    due: fields.due.optional(),
  }),
  async run({ agentId, title, description, priority, due }, ctx) {
    await ctx.agent(agentId);
    const now = nowIso();
    const todo: Todo = {
      id: newId("todo"),
      title,
      description: description ?? null,
      status: "open",
      priority,
      due: due ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await stateClient(ctx.trigger).set(todosScope(agentId), todo.id, todo);
    return { todo };
  },
});

const todoList = defineTool({
  id: "tool::todo_list",
  actsFor: "agent",
  description: "Your todo items, optionally of one status, oldest first: {todos}.",
  input: z.strictObject({ agentId: agentIdField, status: fields.status.optional() }),
  async run({ agentId, status }, ctx) {
    await ctx.agent(agentId);
    const todos: Todo[] = [];
    for await (const { value } of stateClient(ctx.trigger).scan<Todo>(todosScope(agentId)))
      if (!status || value.status === status) todos.push(value);
    return { todos: todos.sort((a, b) => a.createdAt.localeCompare(b.createdAt)) };
  },
});

const todoUpdate = defineTool({
  id: "tool::todo_update",
  actsFor: "agent",
  description:
    "Change a todo item (title, description, status open|in_progress|done|cancelled, priority, due): {todo}.",
  input: z.strictObject({
    agentId: agentIdField,
    todoId: z.string().min(1).max(256),
    title: fields.title.optional(),
    description: fields.description.optional(),
    status: fields.status.optional(),
    priority: fields.priority.optional(),
    due: fields.due.optional(),
  }),
  async run({ agentId, todoId, ...changes }, ctx) {
    await ctx.agent(agentId);
    const { value } = await casUpdate<Todo>(
      stateClient(ctx.trigger),
      todosScope(agentId),
      todoId,
      ({ value: current }) => {
        if (!current) throw notFound(`You have no todo ${todoId}`);
        const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
        return { ...current, ...defined, updatedAt: nowIso() };
      },
    );
    return { todo: value };
  },
});

const todoDelete = defineTool({
  id: "tool::todo_delete",
  actsFor: "agent",
  description: "Remove a todo item: {deleted}.",
  input: z.strictObject({ agentId: agentIdField, todoId: z.string().min(1).max(256) }),
  async run({ agentId, todoId }, ctx) {
    await ctx.agent(agentId);
    const removed = await stateClient(ctx.trigger).delete(todosScope(agentId), todoId);
    if (!removed) throw notFound(`You have no todo ${todoId}`);
    return { deleted: todoId };
  },
});

export const todoTools = [todoCreate, todoList, todoUpdate, todoDelete];
