"""An app's and an assistant's MCP servers as Yao configures them: ``mcps/*.mcp.yao``.

Yao reads the app's ``mcps/<id>.mcp.yao`` (``mcps/a/b.mcp.yao`` is ``a.b``) and an assistant's own
``mcps/<name>.mcp.yao`` as ``agents.<assistant-id>.<name>`` (``agent/docs/mcp.md`` "Directory
Structure"). A file says its ``transport``: ``stdio`` (``command``, ``arguments``, ``env``) and ``http``
(``url``, ``authorization_token``) can run here, as :class:`~agentctx_widgets.models.mcp.McpServer`\\ s;
``process`` (Yao processes as tools) and ``sse`` cannot (the kit has no Yao processes; the SDK's SSE
client is not wired in), and each is named in a diagnostic.

A downloaded package that starts a process is a risk, so nothing starts unless asked:
``load_assistant(path, start_mcp=True)`` registers the servers (each starts on its first call);
without it each runnable server is named in a ``yao_mcp_not_started`` diagnostic with the command or URL
it would use. ``$ENV.NAME`` in ``env``, ``url`` or ``authorization_token`` is filled from the environment
as Yao fills it, limited by ``env_allow`` as the prompts are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..output.diagnostics import diagnostic
from ..models.mcp import McpServer
from .jsonc import JSONCError, loads_jsonc

__all__ = ["configured_servers"]

_MAX_FILE = 1_000_000
_MAX_FILES = 200


def configured_servers(app_root: Path | None, directory: Path, assistant_id: str, *, start: bool,
                       env_allow: frozenset[str] | None) -> tuple[dict[str, McpServer], list[dict]]:
    """The servers the configuration describes (registered only when ``start``) and the diagnostics."""
    found: list[tuple[str, Path]] = []
    if app_root is not None:
        found += _files(app_root / "mcps", "")
    found += _files(directory / "mcps", f"agents.{assistant_id}.")
    servers: dict[str, McpServer] = {}
    diagnostics: list[dict] = []
    for server_id, file in found:
        server, problem = _server(server_id, file, env_allow)
        if problem:
            diagnostics.append(diagnostic("yao_mcp_not_run", str(file), server=server_id, problem=problem))
        elif start:
            servers[server_id] = server
        else:
            diagnostics.append(diagnostic("yao_mcp_not_started", str(file), server=server_id, runs=repr(server)))
    return servers, diagnostics


def _files(folder: Path, prefix: str) -> list[tuple[str, Path]]:
    if not folder.is_dir():
        return []
    files = sorted(path for path in folder.rglob("*.mcp.yao") if "mapping" not in path.relative_to(folder).parts)
    return [(prefix + ".".join(path.relative_to(folder).with_name(path.name[:-len(".mcp.yao")]).parts), path)
            for path in files[:_MAX_FILES]]


def _server(server_id: str, file: Path, env_allow: frozenset[str] | None) -> tuple[McpServer | None, str]:
    try:
        if file.stat().st_size > _MAX_FILE:
            return None, f"{file.name} is over {_MAX_FILE:,} bytes"
        config = loads_jsonc(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, JSONCError) as error:
        return None, f"{file.name} cannot be read: {error}"
    if not isinstance(config, dict):
        return None, f"{file.name} is not an object"
    transport = config.get("transport")
    try:
        if transport == "stdio":
            return _stdio(server_id, config, env_allow), ""
        if transport == "http":
            return _http(server_id, config, env_allow), ""
    except (ValueError, TypeError) as error:
        return None, str(error)
    return None, f"transport {transport!r} does not run here"


def _stdio(server_id: str, config: dict, env_allow: frozenset[str] | None) -> McpServer:
    env = config.get("env") or {}
    if not isinstance(env, Mapping):
        raise ValueError("env must be an object")
    arguments = config.get("arguments") or []
    return McpServer.stdio(config.get("command", ""), arguments,
                           env={str(k): _filled(str(v), env_allow) for k, v in env.items()}, name=server_id)


def _http(server_id: str, config: dict, env_allow: frozenset[str] | None) -> McpServer:
    token = _filled(str(config.get("authorization_token") or ""), env_allow)
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return McpServer.http(_filled(str(config.get("url", "")), env_allow), headers, name=server_id)


def _filled(value: str, env_allow: frozenset[str] | None) -> str:
    if not value.startswith("$ENV."):
        return value
    name = value[5:]
    return os.environ.get(name, "") if env_allow is None or name in env_allow else ""


