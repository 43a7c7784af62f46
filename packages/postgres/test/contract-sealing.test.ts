import { describePostgresConformance } from "./helpers/conformance-target.js";

// The SessionStore contract again, on stores that seal their word index every 3 appends (in
// the background, as they cross the mark) and re-read its ranges before every search: the
// split index's seals, merges and range switches under every operation the contract checks.
describePostgresConformance("postgres (sealing every 3 appends)", {
  wordIndex: { sealEvery: 3, refreshMs: 0, dropDelayMs: 0 },
});
