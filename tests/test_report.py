"""`fleetrules report` and `--report FILE`: one self-contained HTML page, checked as a document here and
loaded in a real headless Chromium (Debian's package) where the machine has one."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
FLINK_HA = ROOT / "examples" / "flink-ha"
CHECKPOINT = ROOT / "examples" / "flink-checkpoint"


class _Page(HTMLParser):
    """The elements of a page: tag and attributes, and every external reference."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.elements.append((tag, found))
        for key in ("src", "href"):
            if key in found:
                self.external.append(found[key])
        if tag == "link":
            self.external.append(found.get("href", "link"))

    def all(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def _page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _report(tmp_path: Path) -> Path:
    out = tmp_path / "report.html"
    args = [
        "report",
        str(FLINK_HA / "policy.fr"),
        "--facts",
        str(FLINK_HA / "facts"),
        "--base",
        str(ROOT / "tests" / "data" / "flink-ha-tightened.fr"),
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def test_the_placement_matrix_and_the_diff(tmp_path: Path) -> None:
    page = _page(_report(tmp_path))
    assert page.external == []  # nothing fetched at view time
    rows = {a["data-binding"] for a in page.all("tr") if "data-binding" in a}
    assert "streaming/orders-d-flinkdeployment" in rows and "analytics/orders-a-flinkdeployment" in rows
    columns = [a["data-cluster"] for a in page.all("th") if "data-cluster" in a]
    assert columns == ["member-dev", "member-legacy", "member1", "member2", "member3"]
    cells = [a for a in page.all("td") if "data-cluster" in a]
    assert len(cells) == len(columns) * 7  # every binding by every cluster
    legacy = [c for c in cells if c["data-cluster"] == "member-legacy"]
    assert all(c["class"].startswith("cell rule-") and "flink-ha/clusters.exclude" in c["title"] for c in legacy)
    assert sum("selected" in c["class"] for c in cells) == 6  # orders-d alone finds no cluster
    assert any(a.get("id") == "changes" for a in page.all("table"))


def test_the_failover_timeline(tmp_path: Path) -> None:
    out = tmp_path / "timeline.html"
    args = ["simulate", str(CHECKPOINT / "policy.fr"), "--facts", str(CHECKPOINT / "facts")]
    result = CliRunner().invoke(
        main, [*args, "--events", str(CHECKPOINT / "events" / "job-fails.yaml"), "--report", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = _page(out)
    (lane,) = [a for a in page.all("div") if a.get("class") == "lane"]
    assert lane["data-binding"] == "streaming/fraud-detector-flinkdeployment"
    assert len(page.all("rect")) == 2  # member1 until the eviction, member2 after
    assert {a.get("class") for a in page.all("text") if a.get("class", "").startswith("mark")} >= {
        "mark evicted",
        "mark work-deleted",
    }


def test_a_loop_in_the_timeline_is_a_band_over_its_bindings_lane(tmp_path: Path) -> None:
    """A loop the timeline lists once (tests/test_simulate_loops.py) is a band from where it is found to the event
    that ends it, titled with its period, over the lanes of the bindings in it."""
    from tests.test_simulate_loops import TOLERATED

    (tmp_path / "fleet.yaml").write_text(TOLERATED)
    (tmp_path / "events.yaml").write_text(
        "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  taint: {cluster: m1, key: k2, effect: NoExecute}\n"
        "- at: 1h\n  untaint: {cluster: m1, key: k2, effect: NoExecute}\n"
    )
    out, fleet = tmp_path / "timeline.html", str(tmp_path / "fleet.yaml")
    args = ["simulate", fleet, "--facts", fleet, "--events", str(tmp_path / "events.yaml"), "--report", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    page = _page(out)
    (lane,) = [a for a in page.all("div") if a.get("class") == "lane"]
    assert lane["data-binding"] == "shop/web-deployment"
    (band,) = [a for a in page.all("rect") if a.get("class") == "repeats"]
    assert float(band["width"]) > 100  # from about 10:10 to 11:00 of an hour's chart
    assert "every 10s, until 2026-12-02T11:00:00Z</title>" in out.read_text(encoding="utf-8")


def test_a_report_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "r.html"
    args = ["eval", str(FLINK_HA / "policy.fr"), "--facts", str(FLINK_HA / "facts"), "--report", str(missing)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "--report: no such directory" in result.stderr
    target = tmp_path / "r.html"
    assert CliRunner().invoke(main, [*args[:-1], str(target)]).exit_code == 0
    assert target.read_text().startswith("<!DOCTYPE html>") and list(tmp_path.iterdir()) == [target]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium)")
def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    page = _report(tmp_path)
    assert CHROMIUM is not None
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-binding="streaming/orders-d-flinkdeployment"' in dom.stdout and 'id="matrix"' in dom.stdout
    assert "CONSOLE" not in dom.stderr and "Uncaught" not in dom.stderr  # no console errors
    shot = tmp_path / "report.png"
    run = subprocess.run(
        [*flags, "--window-size=1100,900", f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120
    )
    assert run.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000


def test_resilience_report(tmp_path: Path) -> None:
    out = tmp_path / "resilience.html"
    args = ["resilience", str(FLINK_HA / "policy.fr"), "--facts", str(FLINK_HA / "facts"), "--workers", "1"]
    result = CliRunner().invoke(main, [*args, "--report", str(out)])
    assert result.exit_code == 0, result.output
    page = _page(out)
    rows = [a for a in page.all("tr") if "data-scenario" in a]
    assert [r["data-scenario"] for r in rows][:3] == ["member1", "member2", "member3"]  # ranked, worst first
    assert rows[0]["class"] == "unschedulable" and rows[-1]["class"] == ""
    assert page.external == []


@pytest.mark.parametrize("kind", ["fifo", "symlink"])  # a directory: click's own usage error
def test_the_report_refuses_to_replace_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """--report writes a file beside the target and renames it over it: never over a FIFO, a device, a
    directory or a symbolic link (whose target it would otherwise detach)."""
    import os

    target = tmp_path / "report.html"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        (tmp_path / "elsewhere.html").write_text("keep")
        target.symlink_to(tmp_path / "elsewhere.html")
    root = Path(__file__).resolve().parent.parent / "examples" / "flink-ha"
    args = ["eval", str(root / "policy.fr"), "--facts", str(root / "facts"), "--report", str(target)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "exists and is not a regular file" in result.stderr
    assert kind == "fifo" or ((tmp_path / "elsewhere.html").read_text() == "keep" and target.is_symlink())


def _cells(html: str) -> list[tuple[str, str, str]]:
    """The matrix's cells as (cluster, class, title), row by row."""
    page = _Page()
    page.feed(html[html.index('id="matrix"') :])
    return [(a["data-cluster"], a.get("class", ""), a.get("title", "")) for a in page.all("td") if "data-cluster" in a]


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium)")
def test_the_report_of_a_fleet_of_a_thousand_clusters_in_headless_chromium(tmp_path: Path) -> None:
    """At 1,000 clusters x 10,000 workloads the page was 1.7 GB (200 x 1,000: 34 MB, 201,000 cells, no summary):
    now it opens on a summary, and its script shows the matrix a page at a time from data in the page, the same
    cells the page itself holds for its first page. Loads, no console error, a screenshot kept."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import json

    import fleets

    fleet = tmp_path / "fleet.json"  # as `kubectl get -o json` prints a List (quicker to write and read than YAML)
    fleet.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": fleets.SHAPES["regional"](1000, 10000)}))
    out = tmp_path / "fleet.html"
    result = CliRunner().invoke(main, ["report", str(fleet), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size <= 25 * 1024 * 1024
    html = out.read_text(encoding="utf-8")
    assert 'id="summary"' in html and 'id="policies"' in html and 'id="groups"' in html
    assert CHROMIUM is not None
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr"]
    dom = subprocess.run([*flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=300)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "CONSOLE" not in dom.stderr and "Uncaught" not in dom.stderr  # no console errors
    assert "bindings 1–100 of 10000" in dom.stdout
    rendered, served = _cells(dom.stdout), _cells(html)
    assert len(rendered) == 100 * 60 and rendered == served  # the script's first page is the page's own
    shot = tmp_path / "fleet.png"
    run = subprocess.run(
        [*flags, "--window-size=1400,1000", f"--screenshot={shot}", out.as_uri()], capture_output=True, timeout=300
    )
    assert run.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG")  # kept in pytest's tmp_path
