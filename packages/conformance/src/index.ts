export {
  type ConformanceTarget,
  describeSessionStoreConformance,
} from "./describe-session-store-conformance.js";
export { type ManualClock, manualClock, rejection } from "./harness.js";
