/**
 * Click-to-load placeholders for remote media (issue 21): an output `image`, `audio` or `video` whose
 * URL — or a video's `thumbnail` — is http(s) fetches nothing until the reader clicks, in the live view
 * and in a saved snapshot reopened later (both draw through createRenderer), so a hook cannot plant a
 * beacon in a notebook. The button looks and reads like the Markdown image's (class `actx-remote-img`,
 * "Load image: …"); the element it stands for is built only by the click.
 *
 * The button's own listener swaps it for the element. The view's root listener (index.js) that loads a
 * Markdown image then finds the button detached and `data-src`-less, and does nothing.
 */
import { h } from "./dom.js";
import { isRemoteUrl } from "./urls.js";

/** @typedef {"image" | "audio" | "video"} MediaKind */

/** @param {string} url */
function hostOf(url) {
  try {
    return new URL(url).host || url.slice(0, 60);
  } catch {
    return url.slice(0, 60);
  }
}

/**
 * Does any of these URLs fetch from the network (http(s))? Null/undefined entries are ignored.
 * @param {(string | null | undefined)[]} urls
 */
export function anyRemote(urls) {
  return urls.some((url) => isRemoteUrl(url));
}

/**
 * A button standing for a media element that would fetch `urls`; a click replaces it with `build()`.
 * `label` (an alt text) is shown after the kind; without one, the host of the first remote URL is.
 * @param {MediaKind} kind
 * @param {(string | null | undefined)[]} urls  the URLs the element would load (src first); the remote ones are named
 * @param {string} label
 * @param {() => HTMLElement} build
 * @returns {HTMLButtonElement}
 */
export function clickToLoad(kind, urls, label, build) {
  const remote = /** @type {string[]} */ (urls.filter((url) => isRemoteUrl(url)));
  const first = remote[0] ?? "";
  const button = /** @type {HTMLButtonElement} */ (h("button", {
    type: "button",
    className: "actx-remote-img",
    "data-testid": "actx-remote-img",
    "data-kind": kind,
    "data-src": first,
    title: `Load ${remote.join(" and ")}`,
    text: `Load ${kind}: ${label || hostOf(first)}`,
  }));
  button.addEventListener("click", () => {
    button.removeAttribute("data-src"); // the root's Markdown-image loader must not make an <img> of it
    button.replaceWith(build());
  }, { once: true });
  return button;
}
