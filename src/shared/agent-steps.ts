/** One agent's part of a multi-agent job: a crew's task, a graph's node, a hand's step. */
export interface AgentTask {
  name: string;
  task: string;
}

/** A step name as a template variable: `research-task` → `research_task`. */
export const stepVariable = (name: string) => name.replace(/[^A-Za-z0-9_]/g, "_");

/**
 * Workflow steps that hand each task to its agent (`agent::chat`) in order: each agent gets its task,
 * the run's input and the previous agent's answer. `agentOf` says how a step names its agent (`agent`
 * in a file, resolved by name on load; `agentId` where the id is known).
 */
export function agentChatSteps<T extends AgentTask, Agent extends { agentId: string } | { agent: string }>(
  tasks: T[],
  agentOf: (task: T) => Agent,
): Array<
  { name: string; functionId: "agent::chat" } & Agent & { promptTemplate: string; outputVar: string }
> {
  return tasks.map((task, index) => {
    const previous = tasks[index - 1];
    const context = previous
      ? `\n\nThe previous step's result:\n{{${stepVariable(previous.name)}.content}}`
      : "";
    return {
      name: task.name,
      functionId: "agent::chat" as const,
      ...agentOf(task),
      promptTemplate: `${task.task}\n\nInput: {{input}}${context}`,
      outputVar: stepVariable(task.name),
    };
  });
}
