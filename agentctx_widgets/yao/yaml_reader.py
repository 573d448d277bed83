"""YAML read the way Yao's ``gopkg.in/yaml.v3`` reads it into Go ``any``, with the line of every node.

PyYAML speaks YAML 1.1, yaml.v3 mostly 1.2: in Yao ``confirm: yes`` / ``off`` are strings and
``2024-01-01`` stays text when decoded into ``any``, while PyYAML's safe loader makes a bool and a
``date``. Locale messages are text, so :class:`YaoLoader` resolves bools as 1.2 does (only
``true``/``false`` in their three spellings) and leaves timestamps as strings. Other 1.1 corners
(``010`` octal, ``1:20`` sexagesimal) are left as PyYAML reads them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["YaoLoader", "compose", "construct"]


class YaoLoader(yaml.SafeLoader):
    """A safe loader with yaml.v3's booleans and no timestamp type."""


YaoLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
YaoLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def compose(text: str) -> tuple[yaml.Node | None, YaoLoader]:
    """The document's node tree (``None`` for an empty document) and the loader that can construct it.

    Raises ``yaml.YAMLError`` (with ``problem_mark``) for text that is not YAML.
    """
    loader = YaoLoader(text)
    try:
        return loader.get_single_node(), loader
    finally:
        loader.dispose()


def construct(loader: YaoLoader, node: yaml.Node) -> Any:
    """Plain Python data for ``node`` (dicts, lists, str, int, float, bool, None)."""
    return loader.construct_object(node, deep=True)
