"""The browser the tests drive (``chromium_page``), and what they measure in the page:
text contrast and overlaps.

Contrast follows WCAG 2 (relative luminance, (L1 + 0.05) / (L2 + 0.05)),
computed from the computed styles of every element that holds text: its
colour over the backgrounds it actually sits on (translucent layers are
composited up to the first opaque one). Colours are read back through a
canvas, so any CSS colour syntax the theme uses (``rgba()``, ``color-mix()``
results in ``color(srgb ...)``) is compared as the pixels it paints.
Disabled controls are left out, as WCAG 1.4.3 leaves them out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

AA = 4.5  # WCAG AA for normal-size text
CHROMIUM = "/usr/bin/chromium"  # Debian's; ``.ci/run`` installs it
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 900}


@contextlib.contextmanager
def chromium_page() -> Iterator[Any]:
    """A page of headless Chromium driven through Playwright; the browser closes after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser.new_page(viewport=VIEWPORT)
        finally:
            browser.close()

CONTRAST_JS = r"""
(selector) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const rgba = css => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#000';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3]));
  const lum = c => {
    const ch = c.map(v => {
      v = v / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)];
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const background = el => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) {
        layers.push(c);
        if (c[3] >= 1) break;
      }
    }
    let bg = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const root = document.querySelector(selector);
  const out = { checked: 0, low: [], min: null };
  if (!root) return out;
  for (const el of [root, ...root.querySelectorAll('*')]) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    if (el.closest('button:disabled, [aria-disabled="true"], option, select, textarea')) continue;
    const bg = background(el);
    const fg = over(rgba(style.color), bg);
    const r = ratio(fg, bg);
    out.checked += 1;
    out.min = out.min === null ? r : Math.min(out.min, r);
    if (r < 4.5) {
      out.low.push({
        text: el.textContent.trim().slice(0, 40),
        cls: String(el.className).slice(0, 60),
        ratio: Math.round(r * 100) / 100,
        fg: fg.map(Math.round),
        bg: bg.map(Math.round)
      });
    }
  }
  return out;
}
"""

# The bottom of one element and the top of the next one in the same panel.
GAP_JS = r"""
([first, second]) => {
  const a = document.querySelector(first).getBoundingClientRect();
  const b = document.querySelector(second).getBoundingClientRect();
  return b.top - a.bottom;
}
"""


def contrast(page: Any, selector: str) -> dict[str, Any]:
    """``{"checked": n, "low": [...], "min": ratio}`` for the text under ``selector``."""
    return page.evaluate(CONTRAST_JS, selector)
