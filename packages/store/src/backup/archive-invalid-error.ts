import { HermesStoreError } from "@hermes/core";

/**
 * A backup archive that cannot be trusted (`ARCHIVE_INVALID`): its manifest is missing or
 * unreadable, it no longer decompresses, its bytes differ from the manifest's sha256, or the
 * snapshot inside fails its checks. `problems` lists every finding; nothing was restored.
 */
export class ArchiveInvalidError extends HermesStoreError {
  /** The archive (or manifest) that was checked. */
  readonly archive: string;
  /** What was found wrong, one sentence each. */
  readonly problems: readonly string[];
  constructor(archive: string, problems: readonly string[], options?: { cause?: unknown }) {
    super("ARCHIVE_INVALID", `Backup ${archive} is not usable: ${problems.join("; ")}`, options);
    this.name = "ArchiveInvalidError";
    this.archive = archive;
    this.problems = problems;
  }
}
