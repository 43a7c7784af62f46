import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { get as httpGet } from "node:http";
import type { WebWorkerReply, WebWorkerRequest } from "../workers/web-server-worker.js";

/** The session browser's server in its own process (see web-server-worker.ts). */
export class ServerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly origin: string,
    readonly token: string,
    /** From the start message to the server listening, in the server's process (ms). */
    readonly startMs: number,
  ) {}

  /**
   * Starts a server on `db`; `warm: false` serves a store opened without `warmReaders` (its
   * read workers start on demand, as `serve` did before it warmed them).
   */
  static async start(db: string, o: { warm?: boolean } = {}): Promise<ServerProcess> {
    const child = fork(new URL("../workers/web-server-worker.js", import.meta.url), [], { stdio: "inherit" });
    child.send({ type: "start", db, warm: o.warm ?? true } satisfies WebWorkerRequest);
    const [reply] = (await once(child, "message")) as [WebWorkerReply];
    if (reply.type !== "listening") throw new Error(`web server worker: ${JSON.stringify(reply)}`);
    return new ServerProcess(child, reply.origin, reply.token, reply.startMs);
  }

  resetLoop(): void {
    this.child.send({ type: "loop-reset" } satisfies WebWorkerRequest);
  }

  async readLoop(): Promise<Extract<WebWorkerReply, { type: "loop" }>> {
    this.child.send({ type: "loop-read" } satisfies WebWorkerRequest);
    const [reply] = (await once(this.child, "message")) as [WebWorkerReply];
    if (reply.type !== "loop") throw new Error(`web server worker: ${JSON.stringify(reply)}`);
    return reply;
  }

  async stop(): Promise<void> {
    this.child.send({ type: "stop" } satisfies WebWorkerRequest);
    await once(this.child, "exit");
  }
}

/**
 * GETs a path over a fresh loopback connection (no keep-alive: a socket the server closed while
 * the baseline side ran would fail the next call) and returns the bytes as sent on the wire.
 */
export function call(
  server: ServerProcess,
  path: string,
  encoding = "gzip",
): Promise<{ bytes: Buffer; encoding: string | null }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(
      `${server.origin}${path}`,
      { agent: false, headers: { authorization: `Bearer ${server.token}`, "accept-encoding": encoding } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          if ((res.statusCode ?? 0) >= 400) reject(new Error(`${path}: HTTP ${res.statusCode}`));
          else
            resolve({
              bytes: Buffer.concat(chunks),
              encoding: (res.headers["content-encoding"] as string) ?? null,
            });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
  });
}
