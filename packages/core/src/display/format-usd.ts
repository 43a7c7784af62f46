const USD = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 4,
  maximumFractionDigits: 4,
});

/**
 * An amount of money in US dollars, in the one format of the CLI and the web: always four
 * decimals (agent costs are often fractions of a cent, and a column of amounts lines up),
 * thousands separated, rounded half away from zero (`Intl.NumberFormat`, `en-US`).
 *
 * @example formatUsd(1.579) // "$1.5790"
 * @example formatUsd(0.00012) // "$0.0001"
 * @example formatUsd(1234.5) // "$1,234.5000"
 */
export function formatUsd(amount: number): string {
  return USD.format(amount);
}
