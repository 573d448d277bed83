/**
 * Where a very long Markdown paragraph may be cut into pieces that render like the whole.
 *
 * Why: the browser lays out a paragraph as one unit, so a 500 KB paragraph still growing costs
 * ~75 ms of layout whenever it is re-rendered (measured in Chromium), over the 50 ms a frame may
 * take. Cut into pieces of their own block boxes, only the last piece is re-parsed and laid out.
 *
 * A cut is safe only inside one plain paragraph, between two words, where no inline construct can
 * be open: every line so far starts with a character that cannot start another block (no list,
 * quote, heading, fence, HTML, table or indented line, no blank line), and the piece holds an even
 * number of each emphasis/code delimiter (`` ` `` `*` `_` `~`) and as many `[` as `]` and `<` as `>`.
 * (A setext underline arriving after the cut heads only the last piece: a known limit.)
 * The scan is incremental: each character of the text is looked at once between two cuts.
 */

/** Characters that may start a line of a plain paragraph (anything else could start another block). */
const BLOCK_START = new Set(["#", ">", "|", "<", "=", "`", "~", ":", " ", "\t", "\r", "\n"]);

/** Slot in `SoftSplitter.counts` per delimiter's char code (-1: not one); the scan reads codes, not strings. */
const SLOT = new Int8Array(128).fill(-1);
const TRACKED = "`*_~[]<>";
for (let k = 0; k < TRACKED.length; k += 1) SLOT[TRACKED.charCodeAt(k)] = k;
const [LBRACKET, RBRACKET, LT, GT] = [4, 5, 6, 7];
const NEWLINE = 10;
const SPACE = 32;
const TAB = 9;

/** @param {number} code */
const isBlank = (code) => code === SPACE || code === TAB;

/**
 * A letter or digit (ASCII by table, the rest by Unicode property).
 * @param {string} text @param {number} i @param {number} code `text.charCodeAt(i)`
 */
function isWordStart(text, i, code) {
  if (code < 128) return (code >= 48 && code <= 57) || ((code | 32) >= 97 && (code | 32) <= 122);
  return /[\p{L}\p{N}]/u.test(/** @type {string} */ (text[i]));
}

/**
 * Can the line starting at `i` only continue a plain paragraph? "unknown" while too little of it is written.
 * (Digits start an ordered list only when a `.` or `)` follows them.)
 * @param {string} text
 * @param {number} i
 * @returns {"plain" | "block" | "unknown"}
 */
function lineKind(text, i) {
  const ch = text[i];
  if (ch === undefined) return "unknown";
  if (ch === "*" || ch === "-" || ch === "+") {
    // a bullet needs a space after it, a thematic break or setext line repeats the character
    const next = text[i + 1];
    if (next === undefined) return "unknown";
    return next === " " || next === "\t" || next === "\n" || next === "\r" || next === ch ? "block" : "plain";
  }
  if (BLOCK_START.has(ch)) return "block";
  let j = i;
  while (j < text.length && j - i < 10 && text[j] >= "0" && text[j] <= "9") j += 1;
  if (j === i) return "plain";
  if (j === text.length) return "unknown";
  return text[j] === "." || text[j] === ")" ? "block" : "plain";
}

export class SoftSplitter {
  /**
   * @param {number} start where the current piece begins
   * @param {boolean} continuing the paragraph already began in an earlier piece
   */
  constructor(start = 0, continuing = false) {
    /** Next position to look at. @type {number} */
    this.pos = start;
    /** @type {number} */
    this.start = start;
    /** False once something other than one plain paragraph was seen: no cut until the next reset. */
    this.plain = true;
    this.continuing = continuing;
    /** How many of each of `` ` * _ ~ [ ] < > `` the piece holds (in that order). */
    this.counts = new Int32Array(TRACKED.length);
  }

  /** Begin a new piece at `start`. @param {number} start @param {boolean} [continuing] */
  reset(start, continuing = false) {
    Object.assign(this, new SoftSplitter(start, continuing));
  }

  /**
   * The first safe cut at or after `start + minPiece` and before `limit`, or -1.
   * The cut falls just before a word: the piece ends with the whitespace before it.
   * @param {string} text the whole text (only grows between resets)
   * @param {number} minPiece
   * @param {number} limit a cut leaves at least `text.length - limit` characters after it
   */
  find(text, minPiece, limit) {
    if (!this.plain) return -1;
    if (this.pos === this.start && !this.continuing) {
      const kind = lineKind(text, this.start);
      if (kind !== "plain") {
        this.plain = kind === "unknown";
        return -1;
      }
    }
    const counts = this.counts;
    const end = Math.min(text.length, limit);
    for (let i = this.pos; i < end; i += 1) {
      const code = text.charCodeAt(i);
      const slot = code < 128 ? SLOT[code] : -1;
      if (code === NEWLINE) {
        const kind = lineKind(text, i + 1);
        if (kind === "unknown") {
          this.pos = i; // the next line's start is not written yet: look again when it is
          return -1;
        }
        if (kind === "block") {
          this.plain = false;
          return -1;
        }
      } else if (slot !== -1) {
        counts[slot] += 1;
      } else if (i >= this.start + minPiece && isBlank(text.charCodeAt(i - 1)) && isWordStart(text, i, code) && this.balanced()) {
        this.pos = i + 1;
        return i;
      }
    }
    this.pos = Math.max(this.pos, end);
    return -1;
  }

  balanced() {
    const c = this.counts;
    for (let k = 0; k < LBRACKET; k += 1) if (c[k] % 2 !== 0) return false;
    return c[LBRACKET] === c[RBRACKET] && c[LT] === c[GT];
  }
}
