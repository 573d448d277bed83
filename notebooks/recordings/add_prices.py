"""Add the genai-prices table's prices to a ReplayModel recording made before recordings kept them (a
maintainer's tool; issue 23).

Since recordings keep prices, each line ``ReplayModel`` writes has ``"prices": {"model", "rates",
"source"}`` — the table's rates for the model that answered, so a replay keeps the price it was recorded
with. A file recorded before has none, and its replays are priced by whatever table is installed. This
gives every line without ``prices`` the ones the installed table has today (as ``ReplayModel`` would
have recorded them; a model the table does not know gets none), leaves the rest of each line as it is
(the key hashes the request only, so it does not change), checks the result loads, and replaces the file
only then.

Run: ``.venv/bin/python notebooks/recordings/add_prices.py notebooks/recordings/models.jsonl ...``
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from agentctx_widgets.models.replay import ReplayModel, prices_of  # noqa: E402


def add_prices(path: Path) -> tuple[int, int]:
    """``path`` with prices on each line that has none: (lines given prices, lines)."""
    ReplayModel(path, mode="replay")  # refuses a file it would not load, before anything is written
    lines = path.read_bytes().splitlines(keepends=True)
    out, added = [], 0
    for raw in lines:
        entry = orjson.loads(raw) if raw.strip() else None
        if isinstance(entry, dict) and "prices" not in entry and isinstance(entry.get("events"), list):
            prices = prices_of(entry["events"])
            if prices is not None:
                entry["prices"] = prices
                raw, added = orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS) + b"\n", added + 1
        out.append(raw)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(b"".join(out))
        ReplayModel(temporary, mode="replay")  # what was written loads
        os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))  # mkstemp made it owner-only
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return added, len(lines)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        given, total = add_prices(Path(name))
        print(f"{name}: prices added to {given} of {total} lines")
