"""The "streaming" mark of a reply still arriving is readable in JupyterLab's light and dark themes.

It used to be --jp-brand-color1 text whose opacity pulsed down to 0.35: in the dark theme that is
dark blue on dark (about 1.9:1 at the pulse's faintest). The test reads the text's color, its opacity
at every point of its animation and the message's background, and asks for WCAG AA (4.5:1) at the
faintest point, in both themes; the screenshots are in tests/browser/artifacts/.
"""

from __future__ import annotations

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

CELL = r'''
from agentctx_widgets import Context, ContextView
ctx = Context([{"type": 2, "content": [{"type": "text", "text": "Hello?"}]}], name="streaming-mark")
view = ContextView(ctx, model="gpt-4o")
view.set_pending({"type": 3, "content": [{"type": "text", "text": "Streaming a reply..."}]})
view
'''

# For each of 21 points of every animation on the mark (paused there), the mark's text colour and
# opacity; and the background the mark is drawn on (the first non-transparent one up the tree).
MEASURE = """() => {
  const role = document.querySelector('.agentctx-view [data-testid=actx-pending] > .actx-role');
  const parse = (c) => c.match(/[\\d.]+/g).map(Number);
  let bg = null;
  for (let el = role; el && !bg; el = el.parentElement) {
    const c = parse(getComputedStyle(el).backgroundColor);
    if (c.length < 4 || c[3] > 0) bg = c.slice(0, 3);
  }
  const anims = document.getAnimations().filter(a => a.effect && a.effect.target === role
    && a.effect.pseudoElement === '::after');
  const samples = [];
  const points = anims.length ? 21 : 1;
  for (let i = 0; i < points; i++) {
    for (const a of anims) {
      const d = a.effect.getComputedTiming().duration;
      a.pause(); a.currentTime = d * i / (points - 1);
    }
    const s = getComputedStyle(role, '::after');
    samples.push({color: parse(s.color), opacity: Number(s.opacity), content: s.content});
  }
  for (const a of anims) a.play();
  return {bg, samples};
}"""


def _luminance(rgb):
    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(fg, bg):
    hi, lo = sorted([_luminance(fg), _luminance(bg)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _faintest_contrast(measured) -> float:
    bg = measured["bg"]
    worst = float("inf")
    for sample in measured["samples"]:
        color = sample["color"]
        alpha = sample["opacity"] * (color[3] if len(color) > 3 else 1)
        seen = [alpha * c + (1 - alpha) * b for c, b in zip(color[:3], bg)]
        worst = min(worst, _contrast(seen, bg))
    return worst


def test_streaming_mark_is_readable_in_light_and_dark(lab):
    write_notebook(lab.server.root, "streaming_mark.ipynb", [CELL])
    lab.open("streaming_mark.ipynb")
    lab.run_all()
    lab.wait_for("() => !!document.querySelector('[data-testid=actx-pending] > .actx-role')")
    lab.page.locator(".agentctx-view").scroll_into_view_if_needed()
    results = {}
    try:
        for theme, name in [("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")]:
            lab.set_theme(theme)
            measured = lab.page.evaluate(MEASURE)
            assert "streaming" in measured["samples"][0]["content"].lower(), measured
            results[name] = round(_faintest_contrast(measured), 2)
            lab.screenshot(f"streaming_mark_{name}", ".agentctx-view")
    finally:
        lab.set_theme("JupyterLab Light")
    assert all(value >= 4.5 for value in results.values()), results
