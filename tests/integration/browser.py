"""Headless Chromium through Playwright, for the tests and the benchmark of
the HTML pages. Debian's chromium (make deps installs it), never a browser
of Playwright's own: nothing is downloaded.
"""
import contextlib
import pathlib
import shutil

from playwright.sync_api import sync_playwright


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@contextlib.contextmanager
def chromium_page(width=1200, height=800):
    """Yields one Playwright page in a headless Chromium."""
    exe = find_chromium()
    assert exe, "chromium is not installed (make deps installs it)"
    with sync_playwright() as pw:
        # no sandbox: the tests run as root, where Chromium's sandbox refuses to start
        browser = pw.chromium.launch(executable_path=exe, chromium_sandbox=False,
                                     args=["--disable-gpu"])
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def file_url(path):
    return pathlib.Path(path).resolve().as_uri()


def script_errors(page):
    """Uncaught exceptions and console errors (a failed load too) since the
    page was last navigated."""
    errors = [f"{e.name}: {e.message}" for e in page.page_errors(filter="since-navigation")]
    return errors + [m.text for m in page.console_messages(filter="since-navigation")
                     if m.type == "error"]
