r"""Page 7's layer strip in Chromium, on a laptop (1280 px) and a phone (390 px), in both languages: a pasted Gemma 3
and Llama 4 config (transformers' defaults, carried by a share link) draw one cell per layer, the whole strip fits the
screen, and its legend names every kind of layer without scrolling."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from conftest import SCREENSHOTS, wait_rendered
from playwright.sync_api import Browser

from posenc_ui import catalog
from posenc_ui.i18n import t
from posenc_ui.presets import ConfigTextParam

pytestmark = pytest.mark.e2e

CONFIGS = Path(__file__).resolve().parents[1] / "app" / "configs"
CASES = {"gemma3": "gemma3_text_defaults.json", "llama4": "llama4_text_defaults.json"}
#: The strip (the chart whose title names the pasted config's layer count), scrolled into view, measured.
STRIP = """(needle) => {
  const chart = [...document.querySelectorAll('.posenc-chart')]
    .find((c) => (c.querySelector('.g-gtitle')?.textContent || '').includes(needle));
  if (!chart) return null;
  chart.scrollIntoView({block: 'center'});
  const box = chart.getBoundingClientRect(), title = chart.querySelector('.g-gtitle').getBoundingClientRect();
  const scroll = chart.querySelector('.legend .scrollbar');
  return {cells: chart.querySelectorAll('.barlayer .point').length, right: box.right, titleCut: box.top - title.top,
          legend: chart.querySelectorAll('.legend .traces').length,
          legendScrolls: !!scroll && scroll.getBoundingClientRect().height > 0};
}"""


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_layer_strip_draws_every_layer_and_fits_the_screen(
    browser: Browser, app_url: str, case: str, lang: str, width: int
) -> None:
    text = (CONFIGS / CASES[case]).read_text()
    config = json.loads(text)
    link = urllib.parse.quote(ConfigTextParam("config", "{}").encode(text))
    context = browser.new_context(viewport={"width": width, "height": 900}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{catalog.BY_ID['extension'].url_path}?lang={lang}&config={link}")
        wait_rendered(page, charts=1)
        rotating = sum(bool(flag) for flag in config.get("no_rope_layers", [1] * config["num_hidden_layers"]))
        needle = t(
            "extension.fig_layers",
            lang,
            model=t("extension.pasted_model", lang),
            layers=config["num_hidden_layers"],
            rotating=rotating,
        )
        page.wait_for_function(f"() => ({STRIP})({json.dumps(needle)}) !== null", timeout=30_000)
        page.wait_for_function(
            f"() => ({STRIP})({json.dumps(needle)}).cells === {config['num_hidden_layers']}", timeout=30_000
        )
        strip = page.evaluate(STRIP, needle)
        flags = config.get("no_rope_layers", [1] * config["num_hidden_layers"])
        kinds = len(set(zip(config["layer_types"], flags, strict=True)))  # (attention, rotates): one legend entry each
        assert strip["legend"] == kinds, strip  # a kind per legend entry: Gemma 3 sliding + full; Llama 4 RoPE + NoPE
        assert not strip["legendScrolls"], "the legend must fit, not scroll"
        assert strip["right"] <= width and page.evaluate("() => document.documentElement.scrollWidth") <= width
        assert strip["titleCut"] <= 0.5, "the title is cut off at the top"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"extension-layers-{case}-{lang}-{width}.png"))
    finally:
        context.close()
