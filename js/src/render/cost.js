/**
 * What a turn and its context cost, as the header shows it (issue 23). The kernel sends a `Cost` as
 * `html/cost.py`'s `cost_json`: amounts are decimal *strings* ("0.0035"), never floats, and this module
 * rounds them with integer arithmetic, the way `context/cost.py`'s `money()` does: two decimals from $1,
 * at most four from a cent, else three significant digits, trailing zeros dropped below $1.
 *
 * The rules, the same as the settled document's: an estimate reads "≈ $0.0035" and its title says the
 * usage was estimated; a model no price table knows reads "unpriced" (never $0) and its title says how to
 * give `prices=`; priced and unpriced calls together read "$0.0035 + unpriced"; a free model "$0 (free)".
 */

/**
 * @typedef {{total: string | null, currency?: string, parts?: Record<string, string>, source?: string,
 *   estimated?: boolean, unpriced?: string[], free?: boolean, calls?: number, message?: string | null}} CostValue
 */

const DECIMAL = /^(-?)(\d{1,40})(?:\.(\d{1,40}))?$/;

/** @param {bigint} n */
const digitCount = (n) => n.toString().length;

/**
 * `digits / 10^scale` rounded half up to `places` (≥ 1) decimals, as text with exactly that many decimals.
 * @param {bigint} digits the amount's digits (no sign) @param {number} scale its decimals @param {number} places
 */
function rounded(digits, scale, places) {
  let value = digits;
  if (places < scale) {
    const unit = 10n ** BigInt(scale - places);
    value = digits / unit + ((digits % unit) * 2n >= unit ? 1n : 0n);
  } else {
    value = digits * 10n ** BigInt(places - scale);
  }
  const text = value.toString().padStart(places + 1, "0");
  return `${text.slice(0, -places)}.${text.slice(-places)}`;
}

/**
 * "$0.0035" from "0.0035" (null when the text is not a plain decimal: no wrong figure is shown).
 * @param {unknown} amount @param {string} [currency]
 */
export function formatMoney(amount, currency = "USD") {
  const match = typeof amount === "string" ? DECIMAL.exec(amount) : null;
  if (!match) return null;
  const sign = currency === "USD" ? "$" : `${currency} `;
  const fraction = match[3] ?? "";
  const digits = BigInt(match[2] + fraction);
  if (digits === 0n) return `${sign}0`;
  const scale = fraction.length;
  const adjusted = digitCount(digits) - 1 - scale; // the power of ten of the first digit
  const places = adjusted >= 0 ? 2 : adjusted >= -2 ? 4 : 2 - adjusted;
  let text = rounded(digits, scale, places);
  if (adjusted < 0) text = text.replace(/0+$/, "").replace(/\.$/, "");
  return `${match[1]}${sign}${text}`;
}

/** @param {unknown} value @returns {CostValue | null} */
function costValue(value) {
  return value && typeof value === "object" && !Array.isArray(value) ? /** @type {CostValue} */ (value) : null;
}

/** @param {CostValue} cost */
const unpricedNames = (cost) => (Array.isArray(cost.unpriced) ? cost.unpriced.filter((n) => typeof n === "string") : []);

/**
 * "$0.0035", "≈ $0.0035", "unpriced", "$0.0035 + unpriced", "$0 (free)"; null for no cost (or a bad value).
 * @param {unknown} value
 */
export function costText(value) {
  const cost = costValue(value);
  if (!cost) return null;
  const unpriced = unpricedNames(cost).length > 0;
  if (cost.total === null || cost.total === undefined) return unpriced ? "unpriced" : null;
  let shown = formatMoney(cost.total, cost.currency);
  if (shown === null) return null;
  if (cost.estimated === true) shown = `≈ ${shown}`;
  if (cost.free === true && /^-?[0.]+$/.test(cost.total)) shown += " (free)";
  return unpriced ? `${shown} + unpriced` : shown;
}

/**
 * The tooltip: the total and its parts, the price source, whether it is an estimate, how to price the rest.
 * @param {unknown} value
 */
export function costTitle(value) {
  const cost = costValue(value);
  if (!cost) return "";
  const lines = [];
  const total = formatMoney(cost.total, cost.currency);
  if (total !== null) {
    const parts = Object.entries(cost.parts && typeof cost.parts === "object" ? cost.parts : {})
      .map(([name, amount]) => [name.replaceAll("_", " "), formatMoney(amount, cost.currency)])
      .filter(([, amount]) => amount !== null)
      .map(([name, amount]) => `${name} ${amount}`);
    lines.push(`${total} ${cost.currency ?? "USD"}${parts.length ? `: ${parts.join(" · ")}` : ""}`);
  }
  if (typeof cost.source === "string" && cost.source) lines.push(`priced by ${cost.source}`);
  if (cost.estimated === true) lines.push("estimated: some of the usage was estimated, not reported by the provider");
  const names = unpricedNames(cost);
  if (typeof cost.message === "string" && cost.message) lines.push(cost.message);
  else if (names.length) lines.push(`unpriced: ${names.join(", ")} — give a price with prices={"model": {"input": …, "output": …}} (USD per million tokens)`);
  return lines.join("\n");
}
