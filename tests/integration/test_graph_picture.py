"""The graph picture as a person sees it: rendered by headless Chromium (skipped without it)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import agentmem
from agentmem.picture import EDGE_COLOURS, KIND_COLOURS, write_picture
from agentmem.testing import HashEmbedder
from tests.conftest import T0

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed")
# As the machine's notes say: no background traffic on a closed network, a fresh profile.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STORY = [
    {"role": "user", "name": "Maya", "content": "Priya found a venue in Lisbon for the offsite."},
    {"role": "user", "name": "Maya", "content": "Robert Chen leads engineering at Quixotrix."},
    {"role": "user", "name": "Maya", "content": "The launch slipped because the API was down."},
    {"role": "user", "name": "Maya", "content": "Priya booked the flights to Lisbon yesterday."},
]


def _chromium(tmp_path, *arguments: str) -> str:
    profile = tmp_path / "profile"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@pytest.fixture
def picture(tmp_path):
    with agentmem.AgentMemory(tmp_path / "store", embedder=HashEmbedder()) as mem:
        bank = mem.bank("offsite")
        bank.retain(STORY, mentioned_at=T0)
        times = {m.id: m.mentioned_at for m in bank.memories()}
        return write_picture(bank.graph(), tmp_path / "graph.html", title="offsite", times=times)


def _counts(page: str) -> tuple[int, int, int]:
    shown = re.search(r'id="counts">Showing (\d+) memories, (\d+) entities and (\d+) links', page)
    assert shown, page[:2000]
    return tuple(int(n) for n in shown.groups())


def test_the_page_counts_what_it_shows_and_filters_by_entity(picture, tmp_path):
    url = picture.path.as_uri()
    everything = _chromium(tmp_path, "--dump-dom", url + "#links=temporal")
    assert _counts(everything) == (
        picture.memories_drawn,
        picture.entities_drawn,
        picture.edges_drawn,
    )
    # The turns and the cause clause of the launch turn (a part of it).
    assert picture.memories_drawn == picture.memories_total == len(STORY) + 1
    by_default = _counts(_chromium(tmp_path, "--dump-dom", url))
    assert by_default[2] == picture.edges_drawn - picture.temporal_drawn
    memories, entities, _ = _counts(_chromium(tmp_path, "--dump-dom", url + "#entity=Priya"))
    assert memories == 2  # the venue and the flights
    assert 1 < entities < picture.entities_drawn


def test_the_screenshot_shows_entities_in_their_colours_and_arrows(picture, tmp_path):
    from PIL import Image

    shot = tmp_path / "graph.png"
    _chromium(tmp_path, "--window-size=1100,1250", f"--screenshot={shot}", picture.path.as_uri())
    pixels = {rgb for _, rgb in Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 24)}

    def drawn(colour: str) -> bool:
        rgb = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        return any(all(abs(a - b) <= 12 for a, b in zip(p, rgb, strict=True)) for p in pixels)

    assert drawn(KIND_COLOURS["person"])  # Priya, Maya, Robert Chen
    assert drawn(EDGE_COLOURS["followed_by"])  # the turns' arrows
    assert len(pixels) > 50  # text, dots and lines, not a blank page
