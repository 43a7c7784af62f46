import open from "open";

/** Opens `url` in the user's default browser (`--open`); a failure is reported, not thrown. */
export async function openInBrowser(url: string): Promise<boolean> {
  try {
    const child = await open(url);
    child.on("error", () => undefined);
    return true;
  } catch {
    return false;
  }
}
