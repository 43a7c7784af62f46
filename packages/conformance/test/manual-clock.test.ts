import { manualClock, rejection } from "@hermes/conformance";
import { describe, expect, it } from "vitest";

describe("harness helpers", () => {
  it("manualClock starts where asked, ticks 1 ms per reading, and moves by hand", () => {
    const clock = manualClock(1_000);
    expect(clock()).toBeCloseTo(1_000.001, 6);
    expect(clock()).toBeCloseTo(1_000.002, 6);
    clock.advance(60);
    expect(clock()).toBeCloseTo(1_060.003, 6);
    clock.set(5);
    expect(clock()).toBeCloseTo(5.001, 6);
  });

  it("manualClock defaults to 2026-01-01T00:00:00Z", () => {
    expect(Math.floor(manualClock()())).toBe(Date.UTC(2026, 0, 1) / 1000);
  });

  it("rejection returns the error a call rejects with, and fails when it resolves", async () => {
    const error = Object.assign(new Error("no"), { code: "INVALID_ARGUMENT" });
    expect(await rejection(Promise.reject(error))).toBe(error);
    await expect(rejection(Promise.resolve(1))).rejects.toThrow("expected the call to reject");
  });
});
