import { spawn } from "node:child_process";
import { once } from "node:events";
import type { SessionsAnswer } from "@hermes/web";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, cliOn, copyOfSample, fingerprint, oneErrorLine } from "./helpers/cli.js";

/** Starts `hermes-sessions serve --json` and resolves with the address it printed. */
async function serve(args: string[]) {
  const child = spawn(process.execPath, [CLI_MAIN, ...args, "--json"], {
    env: { ...process.env, TZ: "UTC" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8");
  const info = await new Promise<{ url: string; origin: string; port: number; writable: boolean }>(
    (resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("}")) resolve(JSON.parse(out));
      });
      child.once("exit", (code) => reject(new Error(`serve exited (${code}) before listening`)));
    },
  );
  return { child, info };
}

describe("serve", () => {
  it("serves the database read-only on a loopback port with a token, and stops on SIGINT", async () => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const { child, info } = await serve(["--db", db, "serve", "--port", "0"]);
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
    expect(info.writable).toBe(false);
    const token = new URL(info.url).searchParams.get("token");
    const res = await fetch(`${info.origin}/api/sessions?limit=5`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as SessionsAnswer).sessions).toHaveLength(5);
    expect((await fetch(`${info.origin}/api/sessions`)).status).toBe(401);
    child.kill("SIGINT");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(fingerprint(db)).toBe(before);
  });

  it("refuses a non-loopback address without --token (usage error, one line)", () => {
    const db = copyOfSample();
    const r = cliOn(db, ["serve", "--host", "0.0.0.0", "--port", "0"]);
    expect(r.code).toBe(2);
    expect(oneErrorLine(r)).toMatch(/without an explicit --token/);
  });

  it("reports a missing database in one line", () => {
    const r = cliOn("/nonexistent/state.db", ["serve", "--port", "0"]);
    expect(r.code).toBe(1);
    expect(oneErrorLine(r)).toContain("No database at /nonexistent/state.db");
  });
});
