"""The README's walkthrough, run as printed against a real placementd.

Every fenced block of README.md carries a marker on the line before it:

    <!-- walkthrough -->          a shell block run with bash, in order
    <!-- walkthrough: FILE -->    a block written to FILE for later blocks
    <!-- not run: WHY -->         a synopsis, or a step that needs a GPU node

The blocks run in a fresh directory laid out like a clone after
`scripts/run` (build/release/... and clients/python linked to this build and
checkout), with HOME holding the admin token where scripts/run writes it and
PLACEMENT_SERVER naming a placementd on its own database (from
PLACEMENT_TEST_DATABASE_URL). A block that exits non-zero fails the test
with its output.

Environment (set by tests/external/CMakeLists.txt): README, PLACEMENTD,
PLACECTL, PLACEMENT_AGENT, PLACEMENT_PYTHON_STUBS, PLACEMENT_SOURCE_DIR.
"""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from placementd_launcher import Placementd

MARKER = re.compile(r"^<!--\s*(walkthrough(?::\s*(\S+))?|not run:[^>]*)\s*-->$")
FENCE = re.compile(r"^```(\w*)\s*$")
BLOCK_TIMEOUT_S = 120


def readme_blocks(text):
    """[(marker, file or None, language, body, line)] for every fenced block;
    marker None for a block without one."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = "\n".join(lines[i + 1:j]) + "\n"
        marker = None
        file_name = None
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0:
            m = MARKER.match(lines[k].strip())
            if m:
                marker = "walkthrough" if m.group(1).startswith(
                    "walkthrough") else "not run"
                file_name = m.group(2)
        blocks.append((marker, file_name, fence.group(1), body, start + 1))
        i = j + 1
    return blocks


class ReadmeWalkthroughTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        with open(os.environ["README"]) as f:
            cls.blocks = readme_blocks(f.read())

    def test_every_block_is_marked(self):
        unmarked = [line for marker, _, _, _, line in self.blocks
                    if marker is None]
        self.assertEqual(unmarked, [], "README blocks (by line) without a "
                         "<!-- walkthrough --> or <!-- not run: ... --> marker")
        walkthrough = [b for b in self.blocks if b[0] == "walkthrough"]
        languages = {lang for _, _, lang, _, _ in walkthrough}
        self.assertIn("sh", languages)
        self.assertIn("python", languages)

    def test_walkthrough_runs_as_printed(self):
        work = tempfile.mkdtemp(prefix="readme-walkthrough-")
        placementd = Placementd("readme", auth=True)
        try:
            placementd.start()
            self._run_walkthrough(work, placementd)
        finally:
            placementd.stop()
            shutil.rmtree(work, ignore_errors=True)

    def _run_walkthrough(self, work, placementd):
        # A clone after scripts/run, as far as the walkthrough can tell.
        links = {
            "build/release/clients/placectl": os.environ["PLACECTL"],
            "build/release/clients/agent/placement-agent":
                os.environ["PLACEMENT_AGENT"],
            "build/release/services/placementd": os.environ["PLACEMENTD"],
            "build/release/proto/python": os.environ["PLACEMENT_PYTHON_STUBS"],
            "clients/python": os.path.join(
                os.environ["PLACEMENT_SOURCE_DIR"], "clients", "python"),
        }
        for name, target in links.items():
            path = os.path.join(work, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
        home = os.path.join(work, "home")
        token_dir = os.path.join(home, ".config", "placement")
        os.makedirs(token_dir)
        token_file = os.path.join(token_dir, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600),
                  "w") as f:
            f.write(placementd.token + "\n")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PLACEMENT_") and k not in
               ("PYTHONPATH", "XDG_STATE_HOME")}
        env.update(HOME=home, PLACEMENT_SERVER=placementd.server,
                   PYTHONDONTWRITEBYTECODE="1")

        ran = 0
        for marker, file_name, lang, body, line in self.blocks:
            if marker != "walkthrough":
                continue
            if file_name:
                with open(os.path.join(work, file_name), "w") as f:
                    f.write(body)
                continue
            self.assertEqual(lang, "sh", f"README line {line}: a walkthrough "
                             f"block that runs must be sh (name a file "
                             f"otherwise)")
            out = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", body], cwd=work, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, timeout=BLOCK_TIMEOUT_S)
            print(f"--- README line {line}: exit {out.returncode}\n{out.stdout}")
            self.assertEqual(out.returncode, 0,
                             f"README block at line {line} exited "
                             f"{out.returncode}:\n{body}\n{out.stdout}\n"
                             f"placementd:\n{placementd.log()}")
            ran += 1
        self.assertGreater(ran, 0)

        # What the walkthrough claims it did, asked of the service.
        listed = subprocess.run(
            [os.path.join(work, "build/release/clients/placectl"), "--json",
             "runs", "list"], cwd=work, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual(listed.returncode, 0, listed.stdout)
        self.assertIn('"a100-train"', listed.stdout)  # placectl runs upload
        self.assertIn('"l40s-adapters"', listed.stdout)  # RunRecorder
        spool = os.path.join(home, ".local", "state", "placement", "spool")
        left = [n for n in os.listdir(spool) if n != "rejected"] \
            if os.path.isdir(spool) else []
        self.assertEqual(left, [], "the recorder left runs in its spool")


if __name__ == "__main__":
    unittest.main()
