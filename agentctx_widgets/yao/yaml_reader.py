"""YAML read the way Yao's ``gopkg.in/yaml.v3`` reads it into Go ``any``, with the line of every node.

PyYAML speaks YAML 1.1, yaml.v3 mostly 1.2: in Yao ``confirm: yes`` / ``off`` are strings and
``2024-01-01`` stays text when decoded into ``any``, while PyYAML's safe loader makes a bool and a
``date``. Locale messages are text, so :class:`YaoLoader` resolves bools as 1.2 does (only
``true``/``false`` in their three spellings) and leaves timestamps as strings. Other 1.1 corners
(``010`` octal, ``1:20`` sexagesimal) are left as PyYAML reads them.

An assistant file comes from outside, so :func:`compose` also refuses, each as a ``yaml.MarkedYAMLError``
carrying the line: nesting deeper than :data:`MAX_DEPTH` (checked while composing, so a 100,000-deep file
is a clear error, not a ``RecursionError``), a tree of more than :data:`MAX_NODES` nodes once its aliases
are expanded (a billion-laughs file), a tag other than the plain ones (``!!python/object``, ``!!binary``,
``!custom``: nothing is constructed from them), and a key that is a list or a mapping; :func:`construct`
refuses an integer longer than Python converts (``sys.get_int_max_str_digits()``), at its line.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml

__all__ = ["MAX_DEPTH", "MAX_NODES", "YaoLoader", "compose", "construct"]

MAX_DEPTH = 200
"""Lists and mappings nested deeper than this are refused (the session store's line depth)."""
MAX_NODES = 1_000_000
"""A document whose node tree, aliases expanded, has more nodes than this is refused."""

_CORE = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))


class YAMLRefused(yaml.MarkedYAMLError):
    """YAML that parses but that an assistant file may not hold; ``problem_mark`` is where."""


class YaoLoader(yaml.SafeLoader):
    """A safe loader with yaml.v3's booleans and no timestamp type, that composes at most ``MAX_DEPTH`` deep."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise YAMLRefused(None, None, f"nests deeper than {MAX_DEPTH} levels (MAX_DEPTH)",
                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """PyYAML's integer, or a refusal at its line for one longer than Python converts
        (``sys.get_int_max_str_digits()``; ``int`` would raise a bare ``ValueError``)."""
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            digits = sum(char.isdigit() for char in node.value)
            raise YAMLRefused(None, None, f"an integer of {digits} digits is over the "
                              f"{sys.get_int_max_str_digits()}-digit limit (sys.get_int_max_str_digits()); "
                              f"refusing it", node.start_mark) from None


YaoLoader.add_constructor(_CORE + "int", YaoLoader.construct_yaml_int)

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
        root = loader.get_single_node()
    finally:
        loader.dispose()
    if root is not None:
        _check_tree(root)
    return root, loader


def _check_tree(root: yaml.Node) -> None:
    """Refuse a tree with a tag other than the plain ones, a non-scalar key, or over ``MAX_NODES`` nodes
    with its aliases expanded (each alias walks its anchor's tree again; the walk stops at the cap)."""
    stack, visited = [root], 0
    while stack:
        node = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise YAMLRefused(None, None, f"has more than {MAX_NODES} nodes once its aliases are expanded "
                              f"(MAX_NODES: a billion-laughs document?)", node.start_mark)
        if node.tag not in _PLAIN_TAGS:
            tag = "!!" + node.tag[len(_CORE):] if node.tag.startswith(_CORE) else node.tag
            raise YAMLRefused(None, None, f"the tag {tag} is not allowed here (only plain text, numbers, "
                              f"booleans, null, lists and mappings)", node.start_mark)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    raise YAMLRefused(None, None, "a key must be text, not a list or a mapping", key.start_mark)
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def construct(loader: YaoLoader, node: yaml.Node) -> Any:
    """Plain Python data for ``node`` (dicts, lists, str, int, float, bool, None)."""
    return loader.construct_object(node, deep=True)
