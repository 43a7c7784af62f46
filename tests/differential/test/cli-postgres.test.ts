import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { openPostgresSessionStore, PG_SCHEMA_VERSION } from "@hermes/postgres";
import { openSessionStore } from "@hermes/store";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { cliMain } from "./helpers/cli-main.js";
import { copyOfSample } from "./helpers/reference-sample.js";

const run = promisify(execFile);
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
const CLI = cliMain();

const cli = async (...args: string[]) => (await run(process.execPath, [CLI, ...args])).stdout;
const pgUrl = (schema: string) => `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;

describe("hermes-sessions with PostgreSQL", () => {
  it("migrate-to-postgres copies the sample, a rerun copies nothing twice, a later run resumes at its cursor", async () => {
    const file = copyOfSample();
    const schema = `c_${randomBytes(6).toString("hex")}`;
    const first = JSON.parse(
      await cli("migrate-to-postgres", "--from", file, "--to", pgUrl(schema), "--json"),
    );
    const sqlite = await openSessionStore({ path: file });
    const sessions = await sqlite.sessionCount();
    const messages = await sqlite.messageCount();
    expect(first).toMatchObject({
      sessions,
      sessionsImported: sessions,
      messagesImported: messages,
      resumedFrom: null,
    });

    const pg = await openPostgresSessionStore({ connectionString: url, schema });
    try {
      expect(await pg.sessionCount()).toBe(sessions);
      expect(await pg.messageCount()).toBe(messages);
      expect(await pg.exportAll()).toEqual(await sqlite.exportAll());
      // Copied into an empty store without search indexes, built at the end.
      expect((await pg.verifySearchIndex()).ok).toBe(true);
      expect(pg.searchMethod).toBe("rum");
      expect((await pg.searchMessages("the", { limit: 1 })).length).toBe(1);

      const again = JSON.parse(
        await cli("migrate-to-postgres", "--from", file, "--to", pgUrl(schema), "--json"),
      );
      expect(again.sessionsImported).toBe(0);
      expect(again.messagesImported).toBe(0);
      expect(again.sessions).toBe(sessions);
      expect(again.resumedFrom).not.toBeNull();

      // New sessions in the file after the copy: the next run starts at the cursor.
      await sqlite.createSession({ id: "late-1", source: "cli" });
      await sqlite.appendMessage({
        sessionId: "late-1",
        role: "user",
        content: "written after the first copy",
      });
      await sqlite.close();
      const later = JSON.parse(
        await cli("migrate-to-postgres", "--from", file, "--to", pgUrl(schema), "--json"),
      );
      expect(later).toMatchObject({ sessionsImported: 1, messagesImported: 1, sessions: sessions + 1 });
      // It resumed at the cursor: the sessions before it are not read again, and count as there.
      expect(later.sessionsSkipped).toBeGreaterThan(0);
      expect(later.sessionsSkipped).toBeLessThan(sessions);
      expect(later.sessionsUnchanged).toBe(sessions);
      expect((await pg.getMessages("late-1")).map((m) => m.content)).toEqual([
        "written after the first copy",
      ]);
      expect(await pg.messageCount()).toBe(messages + 1);
    } finally {
      await pg.close();
      await sqlite.close();
    }
  });

  it("--db postgres://… works for read and write commands", async () => {
    const schema = `c_${randomBytes(6).toString("hex")}`;
    const db = pgUrl(schema);
    const pg = await openPostgresSessionStore({ connectionString: url, schema });
    try {
      await pg.createSession({ id: "20260101_000000_abcdef", source: "cli", model: "m1" });
      await pg.appendMessage({
        sessionId: "20260101_000000_abcdef",
        role: "user",
        content: "deploy the docker image",
      });
      expect(await cli("--db", db, "list")).toContain("20260101_000000_abcdef");
      const hits = JSON.parse(await cli("--db", db, "search", "docker", "--json"));
      expect(hits.map((h: { snippet: string }) => h.snippet)).toEqual(["deploy the >>>docker<<< image"]);
      await cli("--db", db, "title", "20260101_000000_abcdef", "Docker deploy");
      expect(await pg.getSessionTitle("20260101_000000_abcdef")).toBe("Docker deploy");
    } finally {
      await pg.close();
    }
  });

  it("doctor --db postgres://… reports the schema, the search index method and the search indexes", async () => {
    const schema = `c_${randomBytes(6).toString("hex")}`;
    const db = pgUrl(schema);
    // doctor without --repair opens read-only: an empty schema is refused, and stays empty.
    const refused = await cli("--db", db, "doctor", "--json").then(
      () => null,
      (e: { stderr?: string }) => e,
    );
    expect(refused?.stderr).toContain("holds no session store");
    const created = await openPostgresSessionStore({ connectionString: url, schema });
    await created.close();
    const report = JSON.parse(await cli("--db", db, "doctor", "--json"));
    expect(report.ok).toBe(true);
    const byName = Object.fromEntries(
      report.checks.map((c: { name: string; status: string; detail: string }) => [c.name, c]),
    );
    expect(byName["schema version"]).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(new RegExp(`^v${PG_SCHEMA_VERSION}\\b`)),
    });
    expect(byName["search index method"]).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/^RUM/),
    });
    expect(
      report.checks
        .filter((c: { name: string }) => c.name.startsWith("search index idx_"))
        .map((c: { status: string }) => c.status),
    ).toEqual(["ok", "ok", "ok", "ok"]);
    const repaired = JSON.parse(await cli("--db", db, "doctor", "--repair", "--json"));
    expect(repaired).toMatchObject({ ok: true, repaired: true });
  });

  it("doctor names a seal that an older transaction holds back, and that transaction's backend", async () => {
    const schema = `c_${randomBytes(6).toString("hex")}`;
    const store = await openPostgresSessionStore({ connectionString: url, schema });
    const holder = new pg.Client({ connectionString: url, application_name: "doctor-test-holder" });
    await holder.connect();
    try {
      await store.createSession({ id: "a", source: "cli" });
      await store.appendMessages(
        Array.from({ length: 20 }, (_, i) => ({ sessionId: "a", role: "user", content: `word ${i}` })),
      );
      await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      const pid = (await holder.query("SELECT pg_backend_pid() AS pid, txid_current()")).rows[0].pid;
      const sealing = store.sealSearchIndex({ force: true });
      // The seal's first build waits for the older transactions one at a time, in no set order
      // (other test files' may come first): doctor runs until it names the holder.
      let detail = "";
      for (
        const deadline = Date.now() + 30_000;
        !detail.includes(`backend ${pid} (`) && Date.now() < deadline;
      ) {
        const report = JSON.parse(await cli("--db", pgUrl(schema), "doctor", "--json"));
        detail = report.checks.find((c: { name: string }) => c.name.includes("idx_messages_words")).detail;
      }
      expect(detail).toMatch(
        new RegExp(
          `has waited \\d+ s for older transactions of the database to end: (.*; )?backend ${pid} \\(idle in transaction, transaction open \\d+ s, doctor-test-holder\\)(;|$)`,
        ),
      );
      await holder.query("COMMIT");
      expect((await sealing).outcome).toBe("sealed");
    } finally {
      await holder.end();
      await store.close();
    }
  });
});
