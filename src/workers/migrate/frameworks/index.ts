import type { Framework, FrameworkReader } from "../model.ts";
import { autogen } from "./autogen.ts";
import { crewai } from "./crewai.ts";
import { langchain } from "./langchain.ts";
import { langgraph } from "./langgraph.ts";
import { openclaw } from "./openclaw.ts";
import { openfang } from "./openfang.ts";

export const READERS: Record<Framework, FrameworkReader> = {
  openclaw,
  langchain,
  langgraph,
  crewai,
  autogen,
  openfang,
};
