#!/usr/bin/env node
import { runCli } from "./run-cli.js";

// A closed pipe (`hermes-sessions list | head`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2));
