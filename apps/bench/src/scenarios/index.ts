import type { Scenario } from "../scenario.js";
import { appendScenario } from "./append.js";
import { listScenario } from "./list.js";
import { resumeScenario } from "./resume.js";
import { searchScenario } from "./search.js";

/** Every scenario, in the order a full run executes them. */
export const SCENARIOS: readonly Scenario[] = [appendScenario, listScenario, resumeScenario, searchScenario];
