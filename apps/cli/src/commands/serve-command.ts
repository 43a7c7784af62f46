import type { serveSessionBrowser } from "@hermes/web";
import { Command } from "commander";
import { CliError, usageError } from "../cli-error.js";
import { globalOptions } from "../global-options.js";
import { collectList, parseCount } from "../parse-options.js";
import { printJson } from "../write-output.js";

interface ServeOptions {
  port: number;
  host: string;
  open?: boolean;
  token?: string;
  allowWrites?: boolean;
  allowedHost?: string[];
  json?: boolean;
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilStopped(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `serve`: the session browser (`@hermes/web`) on this machine, until Ctrl-C. */
export function serveCommand(): Command {
  return new Command("serve")
    .description("browse sessions in the web browser (read-only unless --allow-writes)")
    .option("-p, --port <n>", "port (0: any free port)", parseCount("--port", { max: 65_535 }), 8787)
    .option("--host <address>", "address to listen on; anything but loopback needs --token", "127.0.0.1")
    .option("--open", "open the address in the default browser")
    .option("--token <secret>", "access token (default: a new random one, printed in the address)")
    .option("--allow-writes", "enable rename, delete and prune in the UI (each confirmed)")
    .option("--allowed-host <name>", "also answer to this Host name (repeatable)", collectList)
    .option("--json", "print the address as JSON once listening")
    .action(async (o: ServeOptions, cmd: Command) => {
      const g = globalOptions(cmd);
      if (o.port > 65_535) throw usageError(`--port must be at most 65535, got ${o.port}`);
      // Loaded here, not at the top: the web server's modules would add to every command's start.
      const { openInBrowser, serveSessionBrowser, WebServerError } = await import("@hermes/web");
      let server: Awaited<ReturnType<typeof serveSessionBrowser>>;
      try {
        server = await serveSessionBrowser({
          db: g.db,
          port: o.port,
          host: o.host,
          token: o.token,
          allowWrites: o.allowWrites ?? false,
          allowedHosts: o.allowedHost,
        });
      } catch (error) {
        if (error instanceof WebServerError) {
          const usage = error.code === "TOKEN_REQUIRED" || error.code === "WEAK_TOKEN";
          throw usage ? usageError(error.message) : new CliError(error.message, 1, { cause: error });
        }
        throw error;
      }
      if (o.allowWrites && !server.writable) {
        process.stderr.write(
          `--allow-writes has no effect: the database is read-only (${server.readOnlyReason}).\n`,
        );
      }
      const mode = server.writable ? "rename, delete and prune enabled" : "read-only";
      if (o.json)
        printJson({
          url: server.url,
          origin: server.origin,
          port: server.port,
          writable: server.writable,
        });
      else process.stdout.write(`Session browser (${mode}) at\n  ${server.url}\nCtrl-C stops it.\n`);
      if (o.open && !(await openInBrowser(server.url))) {
        process.stderr.write("Could not open a browser: open the address above yourself.\n");
      }
      await untilStopped();
      await server.close();
    });
}
