"""A screenshot for the docs, written only when it shows something else than the one there."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

_DIFFERING_PIXELS = """async images => {
  const [a, b] = await Promise.all(images.map(async src => {
    const image = new Image();
    image.src = src;
    await image.decode();
    const canvas = new OffscreenCanvas(image.width, image.height);
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height);
  }));
  if (a.width !== b.width || a.height !== b.height) return -1;
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const d = Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) +
      Math.abs(a.data[i + 2] - b.data[i + 2]);
    if (d > 48) differing++;
  }
  return differing;
}"""


def renew(page: Any, path: Path, png: bytes, *, tolerance: int = 100) -> None:
    """Writes the screenshot ``png`` to ``path`` unless the one there looks the same (at most
    ``tolerance`` pixels differ, compared in ``page``'s browser): a graph zoomed to fit lands a
    hair apart from run to run, and a file rewritten on every run would always show as changed
    in git."""
    if path.exists():
        old, new = (
            f"data:image/png;base64,{base64.b64encode(b).decode()}"
            for b in (path.read_bytes(), png)
        )
        differing = page.evaluate(_DIFFERING_PIXELS, [old, new])
        if 0 <= differing <= tolerance:
            return
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(png)
