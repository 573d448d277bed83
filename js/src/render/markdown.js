/**
 * Markdown → sanitized DOM, and a streaming view that re-parses only the unfinished tail.
 *
 * A growing text is split at the last *block boundary* outside a code fence: the start of a
 * non-indented line that follows a blank line or a closing fence, or an unindented fence opener
 * (a fence may interrupt a paragraph). Everything before it is "finished": rendered once into a
 * chunk whose DOM is never touched again. Only the tail after it is re-parsed per update. While
 * the tail is an open code fence, new characters are appended to its text node without parsing.
 * Lines are scanned once each, so an update costs O(new text + tail), not O(whole text).
 *
 * A paragraph that grows past SPLIT_TAIL without a block boundary is committed in pieces at safe
 * cuts (soft-split.js): a soft chunk (`.actx-md-soft`) is followed by one marked `.actx-md-cont`,
 * with no gap between them, so layout and re-parsing stay about one piece per update.
 *
 * While a message streams fast, a tail longer than TAIL_LIVE_MAX is re-parsed at most every
 * TAIL_INTERVAL_MS: in between, the new characters are shown as plain text (`.actx-md-raw`) after
 * what was last parsed, and a timer renders the text reached once the interval is over. A render with
 * `streaming` false always shows the final text exactly. (Profiled during a 100,000-delta burst: the
 * tail's re-parse and sanitizing was about a third of the page's Markdown work.)
 *
 * DOM: `.actx-md` > `.actx-md-section`* (32 finished chunks each) > `.actx-md-chunk`*, then one
 * `.actx-md-tail`.
 */
import { Marked } from "marked";
import { h, warn } from "./dom.js";
import { sanitizeToFragment } from "./sanitize.js";
import { SoftSplitter } from "./soft-split.js";

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // Task-list boxes as characters: the sanitizer forbids <input>.
    checkbox({ checked }) {
      return checked ? "☑ " : "☐ ";
    },
  },
});

/**
 * Render a complete Markdown string into a sanitized fragment.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  let html;
  try {
    html = /** @type {string} */ (marked.parse(text));
  } catch (error) {
    warn("Markdown parse failed; showing the text as is:", error);
    const fragment = document.createDocumentFragment();
    fragment.append(h("pre", { className: "actx-pre", text }));
    return fragment;
  }
  return sanitizeToFragment(html, text);
}

/** Finished chunks per `.actx-md-section`. */
const SECTION_SIZE = 32;

/** Tail length above which a still-growing tail is re-parsed geometrically, not per update. */
const BIG_TAIL = 64 * 1024;

/** A paragraph tail longer than this is cut into pieces of at least SPLIT_PIECE characters. */
export const SPLIT_TAIL = 24 * 1024;
export const SPLIT_PIECE = 8 * 1024;

/** A skipped big-tail render is caught up this long after the text stops growing (ms). */
const TAIL_SETTLE_MS = 150;

/** A streaming tail up to this long is re-parsed on every update (cheap enough per frame). */
export const TAIL_LIVE_MAX = 8 * 1024;

/** A longer streaming tail is re-parsed at most this often (ms); plain text shows what came between. */
export const TAIL_INTERVAL_MS = 100;

/** @returns {number} */
const monotonicNow = () => globalThis.performance?.now?.() ?? Date.now();

const OPENER = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/**
 * Finds block boundaries in text that only grows, scanning each complete line once.
 */
export class BlockScanner {
  constructor() {
    /** Start of the next line not scanned yet. */
    this.pos = 0;
    /** Last boundary seen (0 = none). */
    this.boundary = 0;
    /** @type {{char: string, len: number, start: number, bodyStart: number, info: string, indent: number} | null} */
    this.fence = null;
    this.prevBlank = false;
    this.afterFence = false;
  }

  /**
   * Scan the complete lines of `text` not scanned yet.
   * @param {string} text
   */
  feed(text) {
    let nl = text.indexOf("\n", this.pos);
    while (nl !== -1) {
      this.line(text.slice(this.pos, nl).replace(/\r$/, ""), this.pos, nl + 1);
      this.pos = nl + 1;
      nl = text.indexOf("\n", this.pos);
    }
    this.peek(text);
  }

  /**
   * A line still being written already starts a block when it follows a blank line or a closing
   * fence and begins unindented (whatever its first character, no block can continue there).
   * @param {string} text
   */
  peek(text) {
    if (this.fence || this.pos >= text.length || !(this.prevBlank || this.afterFence)) return;
    const first = text[this.pos];
    if (first !== " " && first !== "\t" && first !== "\r") this.boundary = this.pos;
  }

  /**
   * @param {string} line
   * @param {number} start
   * @param {number} next
   */
  line(line, start, next) {
    if (this.fence) {
      const closer = line.match(/^ {0,3}(`{3,}|~{3,})[ \t]*$/);
      if (closer && closer[1][0] === this.fence.char && closer[1].length >= this.fence.len) {
        this.fence = null;
        this.afterFence = true;
      }
      this.prevBlank = false;
      return;
    }
    const blank = /^[ \t]*$/.test(line);
    const opener = line.match(OPENER);
    const validOpener = opener && !(opener[2][0] === "`" && opener[3].includes("`"));
    if (!blank) {
      const flush = line[0] !== " " && line[0] !== "\t";
      if ((validOpener && opener[1].length === 0) || (flush && (this.prevBlank || this.afterFence))) {
        this.boundary = start;
      }
    }
    if (validOpener && opener) {
      this.fence = {
        char: opener[2][0],
        len: opener[2].length,
        start,
        bodyStart: next,
        info: opener[3].trim(),
        indent: opener[1].length,
      };
    }
    this.afterFence = false;
    this.prevBlank = blank;
  }
}

/**
 * A Markdown container (`.actx-md`) that follows a growing text cheaply.
 */
/** Views with a catch-up timer pending, so a renderer being destroyed can cancel theirs. */
const SETTLING = new Set();

/**
 * Cancel the catch-up timers of every streaming Markdown view inside `root` (the renderer's destroy()).
 * @param {Element} root
 */
export function cancelSettlesWithin(root) {
  for (const view of [...SETTLING]) {
    if (root.contains(view.el)) view.cancelSettle();
  }
}

export class StreamingMarkdown {
  /** @param {{now?: () => number}} [options] `now`: the clock (ms) the tail's re-parse interval is read on */
  constructor(options = {}) {
    this.now = options.now ?? monotonicNow;
    this.el = h("div", { className: "actx-md" });
    this.tail = h("div", { className: "actx-md-tail" });
    this.el.append(this.tail);
    /** @type {HTMLElement | null} section that receives the next finished chunk */
    this.section = null;
    this.sectionChunks = 0;
    /** The text shown. */
    this.text = "";
    /** Length of the finished prefix (rendered into chunks, never re-parsed). */
    this.committed = 0;
    this.scanner = new BlockScanner();
    /** @type {{start: number, code: Text, shown: number} | null} the open code fence being appended to */
    this.openFence = null;
    /** Text length the tail was last rendered for (-1 = never). */
    this.tailShown = -1;
    /** @type {ReturnType<typeof setTimeout> | null} catch-up render of a skipped big tail */
    this.settleTimer = null;
    /** Safe cuts in the paragraph after the finished prefix. */
    this.splitter = new SoftSplitter(0);
    /** The finished prefix ends inside a paragraph (its last chunk was a soft cut). */
    this.continues = false;
    /** When the tail was last parsed (ms on `now`), and the finished prefix's length then. */
    this.tailParsedAt = -Infinity;
    this.tailCommitted = -1;
    /** @type {Text | null} plain text shown after the tail's parsed part until its next parse */
    this.raw = null;
    /** Text length shown, parsed or as plain text. */
    this.rawEnd = 0;
  }

  reset() {
    this.cancelSettle();
    for (const section of Array.from(this.el.querySelectorAll(":scope > .actx-md-section"))) section.remove();
    this.section = null;
    this.sectionChunks = 0;
    this.tail.replaceChildren();
    this.text = "";
    this.committed = 0;
    this.scanner = new BlockScanner();
    this.openFence = null;
    this.tailShown = -1;
    this.tailParsedAt = -Infinity;
    this.tailCommitted = -1;
    this.raw = null;
    this.rawEnd = 0;
    this.splitter = new SoftSplitter(0);
    this.setContinues(false);
  }

  /**
   * Show `text`; cheap when it extends the previous text.
   * @param {string} text
   * @param {boolean} [streaming] marks the container as still growing
   */
  update(text, streaming = false) {
    this.el.classList.toggle("actx-streaming", streaming);
    if (text === this.text) {
      // the stream ended without new text: what was shown as plain text (or deferred) gets parsed now
      if (!streaming && (this.raw || this.settleTimer !== null)) {
        this.cancelSettle();
        this.showTail();
      }
      return;
    }
    if (!text.startsWith(this.text)) this.reset();
    this.text = text;
    this.scanner.feed(text);
    const boundary = this.scanner.boundary;
    if (boundary > this.committed) {
      this.commit(boundary, false);
      this.splitter.reset(boundary);
    }
    while (text.length - this.committed > SPLIT_TAIL) {
      const cut = this.splitter.find(text, SPLIT_PIECE, text.length - SPLIT_PIECE);
      if (cut === -1) break;
      this.commit(cut, true);
      this.splitter.reset(cut, true);
    }
    this.renderTail(text, streaming);
  }

  /**
   * Render `text[committed, end)` into a finished chunk.
   * @param {number} end
   * @param {boolean} soft the chunk ends inside a paragraph that the next chunk (or the tail) continues
   */
  commit(end, soft) {
    const source = this.text.slice(this.committed, end);
    const chunk = h("div", { className: `actx-md-chunk${this.continues ? " actx-md-cont" : ""}${soft ? " actx-md-soft" : ""}` });
    chunk.append(renderMarkdown(source));
    if (soft) {
      // The piece reads as the source does: no line break the parser wrote after its paragraph, and
      // the words on both sides of the cut stay apart (a parser may drop a paragraph's trailing space).
      while (chunk.lastChild instanceof Text && !chunk.lastChild.data.trim()) chunk.lastChild.remove();
      const last = chunk.lastElementChild;
      if (last && !/\s$/.test(last.textContent ?? "")) last.append(" ");
    }
    this.sectionFor().append(chunk);
    this.committed = end;
    this.openFence = null;
    this.setContinues(soft);
  }

  /** @param {boolean} value */
  setContinues(value) {
    this.continues = value;
    this.tail.classList.toggle("actx-md-cont", value);
  }

  /**
   * Finished chunks are grouped SECTION_SIZE to a section, so the browser's layout walks a few
   * sections (each skipped while off screen) rather than thousands of chunks.
   */
  sectionFor() {
    let section = this.section;
    if (!section || this.sectionChunks >= SECTION_SIZE) {
      section = h("div", { className: "actx-md-section" });
      this.section = section;
      this.sectionChunks = 0;
      this.el.insertBefore(section, this.tail);
    }
    this.sectionChunks += 1;
    return section;
  }

  /** @param {string} text @param {boolean} streaming */
  renderTail(text, streaming) {
    const fence = this.scanner.fence;
    if (fence && fence.start === this.committed && fence.indent === 0) {
      if (this.openFence && this.openFence.start === fence.start) {
        this.openFence.code.appendData(text.slice(this.openFence.shown));
      } else {
        const code = document.createTextNode(text.slice(fence.bodyStart));
        const lang = fence.info.split(/\s+/)[0];
        const codeEl = h("code", { className: /^[\w+#.-]+$/.test(lang) ? `language-${lang}` : null }, [code]);
        this.tail.replaceChildren(h("pre", {}, [codeEl]));
        this.openFence = { start: fence.start, code, shown: 0 };
      }
      this.openFence.shown = text.length;
      this.raw = null;
      this.tailCommitted = -1;
      return;
    }
    this.openFence = null;
    const rest = text.slice(this.committed);
    // A single block can be huge (a 300 KB table with no blank line). While it is still growing,
    // re-parse it only after it grew by a tenth, so its total parsing stays linear.
    if (streaming && rest.length > BIG_TAIL && this.tailShown >= this.committed &&
        text.length - this.tailShown < (this.tailShown - this.committed) / 10) {
      // A stream may stop right here without ever closing the message: catch up once it is quiet.
      this.cancelSettle();
      this.settleAfter(TAIL_SETTLE_MS);
      return;
    }
    const wait = this.tailParsedAt + TAIL_INTERVAL_MS - this.now();
    if (streaming && rest.length > TAIL_LIVE_MAX && wait > 0) {
      this.showRaw();
      if (this.settleTimer === null) this.settleAfter(wait);
      return;
    }
    this.cancelSettle();
    this.showTail();
  }

  /**
   * Catch up with the text reached `ms` from now (a stream may also stop right there).
   * @param {number} ms
   */
  settleAfter(ms) {
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      SETTLING.delete(this);
      if (this.tailShown !== this.text.length || this.raw) this.showTail();
    }, ms);
    SETTLING.add(this);
  }

  /** Re-parse and show everything after the finished prefix. */
  showTail() {
    const rest = this.text.slice(this.committed);
    this.tail.replaceChildren(rest ? renderMarkdown(rest) : "");
    this.tailShown = this.text.length;
    this.tailParsedAt = this.now();
    this.tailCommitted = this.committed;
    this.raw = null;
  }

  /**
   * Show the tail without parsing it: the characters after what was last parsed as plain text at its
   * end, or, when a commit took part of the parsed tail away, the whole tail as plain text.
   */
  showRaw() {
    const text = this.text;
    if (this.tailCommitted !== this.committed) {
      this.raw = document.createTextNode(text.slice(this.committed));
      this.tail.replaceChildren(h("p", {}, [h("span", { className: "actx-md-raw" }, [this.raw])]));
      this.tailCommitted = this.committed;
    } else if (this.raw) {
      this.raw.appendData(text.slice(this.rawEnd));
    } else {
      // inside the parsed tail's last block, so a paragraph keeps flowing on the same line; the
      // parser dropped the paragraph's trailing space, so the words on both sides stay apart
      const last = this.tail.lastElementChild;
      const host = last?.tagName === "P" ? last : this.tail;
      const gap = /\s/.test(text[this.tailShown - 1] ?? "") && !/\s$/.test(host.textContent ?? "") ? " " : "";
      this.raw = document.createTextNode(gap + text.slice(this.tailShown));
      host.append(h("span", { className: "actx-md-raw" }, [this.raw]));
    }
    this.rawEnd = text.length;
  }

  cancelSettle() {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    SETTLING.delete(this);
  }
}
