import type { Scenario } from "../scenario.js";
import { appendScenario } from "./append.js";
import { backupScenario } from "./backup.js";
import { changeCaptureScenario } from "./change-capture.js";
import { changeFeedScenario } from "./change-feed.js";
import { cjkBuildScenario } from "./cjk-build.js";
import { contentionScenario } from "./contention.js";
import { exportScenario } from "./export.js";
import { forkScenario } from "./fork.js";
import { groupCommitScenario } from "./group-commit.js";
import { listScenario } from "./list.js";
import { migrateScenario } from "./migrate.js";
import { postgresScenario } from "./postgres.js";
import { readsScenario } from "./reads.js";
import { resumeScenario } from "./resume.js";
import { searchScenario } from "./search.js";
import { webScenario } from "./web.js";

/** Every scenario, in the order a full run executes them. */
export const SCENARIOS: readonly Scenario[] = [
  appendScenario,
  groupCommitScenario,
  contentionScenario,
  resumeScenario,
  listScenario,
  changeFeedScenario,
  changeCaptureScenario,
  searchScenario,
  cjkBuildScenario,
  readsScenario,
  exportScenario,
  backupScenario,
  forkScenario,
  migrateScenario,
  postgresScenario,
  webScenario,
];
