// Types of lab/build-info.js, which lab/prepare.mjs generates before each extension build.
/** The package version this extension was built from. */
export const VERSION: string;
/** The FrontEndBundle digest of the same source (widget/bundle.py). */
export const DIGEST: string;
