/**
 * The one place where Markdown-produced HTML becomes DOM.
 *
 * DOMPurify removes scripts, event-handler attributes and dangerous URLs. On top of that, nothing
 * written by a model or a tool may make the browser fetch a remote resource by itself (an image URL
 * is a known way to leak data), so: `style` (CSS `url()`), `srcset`, `poster`, `background`, media
 * and embedding tags, SVG and MathML are forbidden, and every `<img>` whose source is not an inline
 * `data:image/...` loses its `src` inside the sanitizer's inert document (before the fragment is
 * adopted into the page, where an image would start loading) and becomes a click-to-load button.
 */
import createDOMPurify from "dompurify";
import { warn } from "./dom.js";
import { isInlineImage, isRemoteUrl } from "./urls.js";

const FORBID_TAGS = [
  "style", "link", "meta", "base", "iframe", "frame", "frameset", "object", "embed", "applet",
  "audio", "video", "source", "track", "picture", "form", "input", "button", "select", "option",
  "textarea", "template", "dialog", "portal", "svg", "math", "image",
];
const FORBID_ATTR = [
  "style", "srcset", "poster", "background", "ping", "formaction", "action", "xlink:href",
  "autofocus", "lowsrc", "dynsrc", "longdesc", "usemap", "src",
];

/** Attribute that carries a remote image's URL from the sanitizer to `placeholders()`. */
export const REMOTE_SRC_ATTR = "data-actx-src";

/** @type {ReturnType<typeof createDOMPurify> | null} */
let purifier = null;

function getPurifier() {
  if (purifier) return purifier;
  purifier = createDOMPurify(window);
  // `src` is forbidden for every element (it is how audio/video/script/iframe fetch). For <img>,
  // the source is noted before the attribute pass: an inline data: image gets it back, anything
  // else is parked in REMOTE_SRC_ATTR for `placeholders()`.
  /** @type {WeakMap<Node, string>} */
  const imageSources = new WeakMap();
  purifier.addHook("uponSanitizeElement", (node) => {
    if (node.nodeName !== "IMG") return;
    const src = /** @type {Element} */ (node).getAttribute("src");
    if (src !== null) imageSources.set(node, src);
  });
  purifier.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "IMG") {
      const src = imageSources.get(node);
      if (src !== undefined) {
        node.setAttribute(isInlineImage(src) ? "src" : REMOTE_SRC_ATTR, src);
      }
    }
    if (node.nodeName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer nofollow");
    }
  });
  return purifier;
}

/** @type {boolean | null} */
let trusted = null;

/**
 * Does the sanitizer work in this DOM? Checked once on a known attack; if it fails (an incomplete
 * DOM implementation), Markdown is shown as plain text rather than unsanitized.
 */
function sanitizerWorks() {
  if (trusted === null) {
    try {
      const probe = purify('<p><img src="x" onerror="alert(1)"><script>alert(2)</script></p>');
      const host = document.createElement("div");
      host.append(probe);
      trusted = host.querySelector("[onerror], script, img[src]") === null && host.querySelector("button.actx-remote-img") !== null;
    } catch {
      trusted = false;
    }
    if (!trusted) warn("the HTML sanitizer does not work in this browser; Markdown is shown as plain text");
  }
  return trusted;
}

/**
 * Sanitize an HTML string into a DocumentFragment that is safe to insert.
 * @param {string} html
 * @param {string} fallbackText shown as plain text if the sanitizer is unusable here
 * @returns {DocumentFragment}
 */
export function sanitizeToFragment(html, fallbackText) {
  if (!sanitizerWorks()) {
    const fragment = document.createDocumentFragment();
    const pre = document.createElement("pre");
    pre.className = "actx-pre";
    pre.textContent = fallbackText;
    fragment.append(pre);
    return fragment;
  }
  return purify(html);
}

/** @param {string} html */
function purify(html) {
  const fragment = /** @type {DocumentFragment} */ (
    /** @type {unknown} */ (
      getPurifier().sanitize(html, {
        USE_PROFILES: { html: true },
        FORBID_TAGS,
        FORBID_ATTR,
        ALLOW_DATA_ATTR: false,
        ALLOW_UNKNOWN_PROTOCOLS: false,
        RETURN_DOM_FRAGMENT: true,
      })
    )
  );
  placeholders(fragment);
  return fragment;
}

/**
 * Replace every parked remote `<img>` with a button that loads it on click.
 * @param {DocumentFragment} fragment
 */
function placeholders(fragment) {
  for (const img of Array.from(fragment.querySelectorAll(`img[${REMOTE_SRC_ATTR}]`))) {
    const url = img.getAttribute(REMOTE_SRC_ATTR) || "";
    const alt = img.getAttribute("alt") || "";
    const doc = img.ownerDocument;
    const button = doc.createElement("button");
    button.type = "button";
    button.className = "actx-remote-img";
    button.setAttribute("data-src", url);
    button.setAttribute("data-testid", "actx-remote-img");
    button.title = `Load ${url}`;
    if (isRemoteUrl(url)) {
      button.textContent = `Load image${alt ? `: ${alt}` : ""} (${hostOf(url)})`;
    } else {
      button.disabled = true;
      button.textContent = `Image not loaded${alt ? `: ${alt}` : ""} (${url.slice(0, 80) || "no URL"})`;
    }
    img.replaceWith(button);
  }
}

/** @param {string} url */
function hostOf(url) {
  try {
    return new URL(url).host || url;
  } catch {
    return url.slice(0, 60) || "no URL";
  }
}
