import { formatUsd as usd } from "@hermes/core";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const number = new Intl.NumberFormat();

/** An epoch-seconds time for people. */
export const formatTime = (epoch: number | null | undefined): string =>
  epoch === null || epoch === undefined ? "—" : dateTime.format(new Date(epoch * 1000));

/** A machine-readable time for `<time datetime>`. */
export const isoTime = (epoch: number): string => new Date(epoch * 1000).toISOString();

export const formatNumber = (n: number | null | undefined): string =>
  n === null || n === undefined ? "—" : number.format(n);

/** A count with its noun, singular for one ("1 message", "2 messages"). */
export const countOf = (n: number | null | undefined, noun: string): string =>
  `${formatNumber(n ?? 0)} ${n === 1 ? noun : `${noun}s`}`;

/** Money in the one format of the CLI and the web (`formatUsd` of `@hermes/core`: `$1.5790`). */
export const formatUsd = (n: number | null | undefined): string =>
  n === null || n === undefined ? "—" : usd(n);

/** How long ago, coarsely ("5 min ago"). */
export function ago(epoch: number, now = Date.now() / 1000): string {
  const s = Math.max(0, now - epoch);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** A session counts as live when it has not ended and something happened in the last 10 minutes. */
export const LIVE_WINDOW_SECONDS = 600;
