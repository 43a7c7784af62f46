import { verifyBackup } from "@hermes/store";
import { Command } from "commander";
import { EXIT } from "../cli-error.js";
import { withProgress } from "../render/progress.js";
import { printJson } from "../write-output.js";

/** `backup verify ARCHIVE`: decompresses the archive and holds it to its manifest and checks; exit 1 when it fails. */
export function backupVerifyCommand(): Command {
  return new Command("verify")
    .description("check that an archive still decompresses to its manifest's snapshot and passes its checks")
    .argument("<archive>", "the .db.gz (or its .manifest.json)")
    .option("--json", "print the report as JSON")
    .action(async (archive: string, _o: unknown, cmd: Command) => {
      // `backup` declares --json too, and takes it wherever it stands.
      const o = cmd.optsWithGlobals() as { json?: boolean };
      const report = await withProgress("verify", (onProgress) => verifyBackup(archive, { onProgress }));
      if (!report.ok) process.exitCode = EXIT.failure;
      if (o.json)
        return printJson({
          archive: report.archive,
          ok: report.ok,
          problems: report.problems,
          check: report.check,
        });
      if (report.ok) {
        const m = report.manifest;
        process.stdout.write(
          `OK ${report.archive}: sha256 matches, integrity ok, ${m?.counts.sessions} sessions and ${m?.counts.messages} messages as in the manifest\n`,
        );
        return;
      }
      process.stderr.write(`error: ${report.archive} failed verification: ${report.problems.join("; ")}\n`);
    });
}
