"""One headless Chromium for a process's publishing: kaleido's figure exports and the layout
checks of the rendered reports. Each used to start a Chromium of its own per call (seconds each,
per notebook of a batch); this one starts on first use, is shared, and is closed at exit. It is
kaleido's browser (a choreographer Browser with plotly.js loaded in its own tab), driven from an
event loop in a thread of its own: kaleido is async, its callers here are not. A call that fails
drops it, so that the next call starts a fresh one rather than talking to a dead browser."""
from __future__ import annotations

import asyncio
import atexit
import json
import threading
import time

# The layout scripts (batch.layout) write their JSON into this element once the page has drawn.
CHECK_ELEMENT = "benchlib-check"
_READ_CHECK = f"(function () {{ var e = document.getElementById('{CHECK_ELEMENT}'); return e ? e.textContent : ''; }})()"
PAGE_TIMEOUT_S = 120.0  # a page that has not written its check by then is reported as not checked


class Browser:
    def __init__(self):
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido = None

    def write_figures(self, specs: list[dict]) -> None:
        """kaleido's write_fig_from_object: as its one-shot call, a figure that fails to render is
        not written, the others are."""
        self._call(lambda k: k.write_fig_from_object(specs))

    def read_check(self, url: str, width: int, height: int) -> dict:
        """Load `url` in a new tab of width x height and return the JSON its script wrote into
        pre#benchlib-check."""
        return self._call(lambda k: _read_check(k, url, width, height))

    def close(self) -> None:
        with self._lock:
            self._close()

    def _call(self, step):
        with self._lock:
            try:
                if self._kaleido is None:
                    self._open()
                return self._run(step(self._kaleido))
            except BaseException:
                self._close()
                raise

    def _open(self) -> None:
        import kaleido

        self._loop = asyncio.new_event_loop()
        threading.Thread(target=_serve, args=(self._loop,), name="benchlib-browser", daemon=True).start()
        # No MathJax: no figure here typesets TeX, and kaleido's default fetches it from a CDN.
        self._kaleido = kaleido.Kaleido(mathjax=False)
        self._run(self._kaleido.open())

    def _run(self, coroutine, timeout: float | None = None):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def _close(self) -> None:
        if self._loop is None:
            return
        try:
            if self._kaleido is not None:
                self._run(self._kaleido.close(), timeout=30)
        except Exception:  # a browser that died or hangs: the loop and its thread still go
            pass
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop, self._kaleido = None, None


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _read_check(browser, url: str, width: int, height: int) -> dict:
    tab = await browser.create_tab("", width=width, height=height, window=True)
    try:
        # The page's CSS px at exactly width x height, as a window of that size shows it.
        await tab.send_command("Emulation.setDeviceMetricsOverride", params={
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        await tab.send_command("Page.navigate", params={"url": url})
        deadline = time.monotonic() + PAGE_TIMEOUT_S
        while True:
            reply = await tab.send_command("Runtime.evaluate", params={"expression": _READ_CHECK,
                                                                      "returnByValue": True})
            text = reply.get("result", {}).get("result", {}).get("value")
            if text:
                return json.loads(text)
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page wrote no check within {PAGE_TIMEOUT_S:g} s")
            await asyncio.sleep(0.1)
    finally:
        await browser.close_tab(tab.target_id)


_SHARED = Browser()
atexit.register(_SHARED.close)


def shared() -> Browser:
    return _SHARED
