import { join } from "node:path";
import { seedDemoDatabase } from "../../dist/demo/seed-demo-database.js";
import { tempDir } from "./cli.js";

/** A fresh database with the demo's sessions; returns its path and the seeded ids. */
export async function seededDb() {
  const path = join(tempDir(), "state.db");
  const seed = await seedDemoDatabase(path);
  return { path, ...seed };
}
