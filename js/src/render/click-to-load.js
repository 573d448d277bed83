/**
 * Click-to-load placeholders for remote media, the one helper for every kind (issues 19/21): a context
 * image block, an output `image`, `audio` or `video` whose URL — or a video's `thumbnail` — is http(s)
 * fetches nothing until the reader clicks, in the live view and in a saved snapshot reopened later (both
 * draw through createRenderer), so a hook cannot plant a beacon in a notebook. The button (class and
 * test id `actx-remote-img`, "Load <kind>: …") is the Markdown image's too; the element it stands for is
 * built only by the click.
 *
 * A button made by `clickToLoad` swaps itself for the element (its own listener). A Markdown image's
 * button comes out of the sanitizer (sanitize.js) with no listener; the view's root listener loads it
 * with `loadRemoteImage`, which does nothing for a `clickToLoad` button: by then it is detached and
 * `data-src`-less.
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
 * A button standing for a media element that would fetch `urls`; a click replaces it with `build(button)`.
 * `label` (an alt text) is shown after the kind; without one, the host of the first remote URL is.
 * @param {MediaKind} kind
 * @param {(string | null | undefined)[]} urls  the URLs the element would load (src first); the remote ones are named
 * @param {string} label
 * @param {(button: HTMLButtonElement) => HTMLElement} build
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
    button.replaceWith(build(button));
  }, { once: true });
  return button;
}

/**
 * The image an image placeholder loads: a remote `src`, sent without a referrer.
 * @param {string} src @param {string} alt
 */
export function remoteImage(src, alt) {
  return h("img", { className: "actx-img", src, alt, referrerpolicy: "no-referrer" });
}

/**
 * A context image block's placeholder: `label` (or the URL) after "Load image: "; the click loads the
 * image with the button's text as its alt.
 * @param {string} url  an http(s) URL
 * @param {string} label
 */
export function remoteImageButton(url, label) {
  return clickToLoad("image", [url], label || url, (button) => remoteImage(url, button.textContent ?? ""));
}

/**
 * The root listener's loader, for a placeholder without a listener of its own (a Markdown image's):
 * swaps it for the image of its `data-src`, http(s) only; any other button is left as it is.
 * @param {Element} button
 */
export function loadRemoteImage(button) {
  const url = button.getAttribute("data-src");
  if (isRemoteUrl(url)) button.replaceWith(remoteImage(/** @type {string} */ (url), button.textContent ?? ""));
}
