/**
 * Which URLs a media element may load.
 *
 * Media output messages (`image`, `audio`, `video`) are sent on purpose by hook code, so they may load
 * their URL — but only http(s), `blob:`, and `data:` of their own media kind; an http(s) image, audio
 * or video source, or a video's http(s) thumbnail, waits for a click (click-to-load.js), as a model-written image does (output-types.js: a view or a saved snapshot opened later
 * fetches no image by itself, so a hook cannot plant a beacon in a notebook). Everything else
 * (javascript:, data:text/html, relative paths, other schemes) is refused and shown as text.
 * The checks run on the raw string, so whitespace or control characters before or inside the
 * scheme make a URL fail rather than slip through a lenient parser.
 */

/** @typedef {"image" | "audio" | "video"} MediaKind */

const REMOTE = /^https?:\/\/[^\s]/i;
const BLOB = /^blob:[^\s]/i;
const DATA_OF = {
  image: /^data:image\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*,/i,
  audio: /^data:audio\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*,/i,
  video: /^data:video\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*,/i,
};

/**
 * The URL itself when a media element of `kind` may load it, else null.
 * @param {unknown} url
 * @param {MediaKind} kind
 * @returns {string | null}
 */
export function tryMediaUrl(url, kind) {
  if (typeof url !== "string") return null;
  if (REMOTE.test(url) || BLOB.test(url) || DATA_OF[kind].test(url)) return url;
  return null;
}

/**
 * Is this an http(s) URL (one that a click-to-load placeholder may load)?
 * @param {unknown} url
 */
export function isRemoteUrl(url) {
  return typeof url === "string" && REMOTE.test(url);
}

/**
 * Is this an inline `data:image/...` URL (shown directly: it fetches nothing)?
 * @param {unknown} url
 */
export function isInlineImage(url) {
  return typeof url === "string" && DATA_OF.image.test(url);
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/**
 * A `data:` URL for base64 content of a media type, or null when the type is not a plain
 * `kind/subtype` of the expected kind (so `text/html` can never become a data URL here).
 * @param {unknown} mimetype
 * @param {unknown} base64
 * @param {MediaKind} kind
 * @returns {string | null}
 */
export function tryDataUrl(mimetype, base64, kind) {
  if (typeof mimetype !== "string" || typeof base64 !== "string") return null;
  if (!MIME.test(mimetype) || !mimetype.toLowerCase().startsWith(`${kind}/`)) return null;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(base64)) return null;
  return `data:${mimetype.toLowerCase()};base64,${base64.replace(/\s+/g, "")}`;
}

/**
 * Decoded size of a base64 string, in bytes.
 * @param {string} base64
 */
export function base64Size(base64) {
  const clean = base64.replace(/\s+/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}
