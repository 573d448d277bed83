// @vitest-environment node
import { describe, expect, test } from "vitest";
import { costText, formatMoney } from "../src/render/cost.js";

describe("formatMoney rounds decimal strings as context/cost.py's money() does", () => {
  test.each([
    ["0", "$0"],
    ["0.0035", "$0.0035"], // gpt-4o, 1000 in + 100 out
    ["0.007", "$0.007"],
    ["0.12345", "$0.1235"], // four decimals from a cent, half up
    ["0.10000", "$0.1"], // trailing zeros dropped below $1
    ["0.00123456", "$0.00123"], // three significant digits below a cent
    ["0.0012345", "$0.00123"],
    ["0.00012350", "$0.000124"], // half up at the third digit
    ["0.000000025", "$0.000000025"],
    ["1", "$1.00"],
    ["12.345", "$12.35"],
    ["1234567.891", "$1234567.89"],
    ["-0.5", "-$0.5"],
    ["0.009999", "$0.01"], // rounds up past a cent: still "$0.01"
    ["0.99996", "$1"], // rounds to 1.0000 below $1: zeros and the point dropped
  ])("%s -> %s", (amount, shown) => {
    expect(formatMoney(amount)).toBe(shown);
  });

  test("another currency is named; anything but a plain decimal string is refused", () => {
    expect(formatMoney("2.5", "EUR")).toBe("EUR 2.50");
    for (const bad of [0.5, "1e-3", " 1", "1.", ".5", "0x1", null, undefined, "1".repeat(50)]) {
      expect(formatMoney(bad)).toBe(null);
    }
  });

  test("no value, or an unpriced one without names, shows nothing", () => {
    expect(costText(null)).toBe(null);
    expect(costText([])).toBe(null);
    expect(costText({ total: null, unpriced: [] })).toBe(null);
  });
});
