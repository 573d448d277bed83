"""``run_turn``: the front door to one turn, above both lifecycles it picks between.

Why a module of its own: the seed's hook lifecycle (``hooks.runner``) and a Yao assistant's request
(``yao.turns``, which builds on ``hooks``) are two engines; the one call that chooses between them
must sit above both, or the lower layer imports the higher one (issue 19). This module only
dispatches, checks the arguments each lifecycle takes, and turns a failed result into ``TurnError``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable
from typing import Any

from .context import Context
from .hooks.base import Hooks
from .hooks.hook_context import HookContext
from .hooks.runner import TurnResult, TurnView, checked, run_seed_turn, run_seed_turn_async
from .models import Model
from .output import Output

__all__ = ["run_turn", "run_turn_async"]


async def run_turn_async(
    context: Context,
    user_input: Any,
    *,
    model: Model | None = None,
    hooks: Hooks | str | Any = None,
    view: TurnView | None = None,
    tools: Iterable[Any] | None = None,
    max_tool_rounds: int | None = None,
    accept: str = "cui-web",
    streaming: bool = True,
    max_retries: int = 3,
    output: Output | None = None,
    hook_ctx: HookContext | None = None,
    options: dict | None = None,
    strict: bool = False,
    connectors: dict[str, Model] | None = None,
    assistant: Any = None,
    prices: dict | None = None,
    budget: Any = None,
    check: bool = True,
    **ctx_fields: Any,
) -> TurnResult:
    """Run one turn (the hook lifecycle of ``agentctx_widgets.hooks.runner``) and return what it did.

    ``model`` streams the response; ``hooks`` are loaded hooks, JavaScript source, or Python hook
    functions (anything ``hooks_from_python`` takes); ``view`` (a ``ContextView``) shows it live;
    ``tools`` are Python callables the model may call; ``accept`` is the client kind (``cui-web``,
    ``standard``); ``options`` go to the model for this turn; ``strict`` turns the first diagnostic (what
    Yao accepts but would surprise a hook author) into the turn's error; ``connectors`` maps Yao
    connector names to models, for a ``Create`` hook that returns ``{connector}``; ``ctx_fields`` set
    ``ctx`` fields (``chat_id``, ``locale``, ``theme``, …). ``run_turn`` takes the same arguments and waits for the turn (it
    works inside a running event loop, such as a notebook cell's, and takes Ctrl-C). ``max_tool_rounds``
    defaults to 8.

    ``assistant`` (a Yao assistant directory or ``agentctx_widgets.yao.load_assistant``'s result) runs
    the turn as today's Yao runs a request instead — ``Create``, the model, tools, ``Next`` — and returns
    ``agentctx_widgets.yao.YaoTurnResult`` (``.next`` is what ``Next`` returned; ``.events`` the
    lifecycle events); ``hooks`` then replaces the assistant's script, ``max_tool_rounds`` defaults to
    Yao's (``mcp.options.max_turn``, else 5), and ``streaming``, ``max_retries``, ``output``,
    ``hook_ctx`` and ``strict`` are the seed lifecycle's only.

    ``prices`` gives or overrides model prices (USD per million tokens: ``{"my-model": {"input": 1.0,
    "output": 2.0}}``, or ``"free"``; ``context.cost``), checked before the turn runs (``PriceError``) and
    kept on the result, so ``result.cost`` uses them. ``budget`` (US dollars, an int, float or Decimal
    > 0) stops a turn whose running cost would pass it: every model call of the turn counts (tool round
    trips summed), the completed ones priced from their usage and the one in flight from an estimate (its
    input, and its output as it streams) until its ``done`` brings the provider's usage. The model stream
    is closed as an interrupt closes it, nothing is committed (the input stays, as after an interrupt),
    and the turn fails with ``BUDGET_EXCEEDED``, its message saying what was spent of what (``≈`` when
    estimated); ``result.cost`` includes the stopped call, estimated. A budget with a model that no price
    table or ``prices`` can price is refused up front (``ValueError``; ``BUDGET_UNPRICED`` when a call
    the turn reaches later, such as a ``Create`` hook's connector, cannot be priced).

    A failed turn raises :class:`TurnError` (what failed, where, a hint; ``.result`` is the failed
    result, and the context is as it was before the turn) unless ``check=False``, which returns the
    failed result (``result.ok`` false, ``result.error`` the reason). An interrupt raises
    ``KeyboardInterrupt`` either way.
    """
    arguments = dict(locals())
    check = arguments.pop("check")
    if arguments.pop("assistant") is not None:
        from .yao.turns import run_with_assistant_async  # lazily: yao is heavier; it sits below this module

        return checked(await run_with_assistant_async(**_assistant_arguments(locals())), check)
    fields = arguments.pop("ctx_fields")
    return checked(await run_seed_turn_async(**arguments, **fields), check)


@functools.cache
def _signature() -> inspect.Signature:
    """run_turn_async's signature, read once (``inspect.signature`` costs ~0.1 ms, a tenth of a scripted turn)."""
    return inspect.signature(run_turn_async)


@functools.wraps(run_turn_async)
def run_turn(*args: Any, **kwargs: Any) -> TurnResult:  # the signature and docstring are run_turn_async's
    bound = _signature().bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    check = arguments.pop("check")
    if arguments.pop("assistant") is not None:
        from .yao.turns import run_with_assistant

        return checked(run_with_assistant(**_assistant_arguments(bound.arguments)), check)
    fields = arguments.pop("ctx_fields")
    return checked(run_seed_turn(**arguments, **fields), check)


run_turn.__doc__ = (run_turn_async.__doc__ or "").replace("Run one turn", "Run one turn and wait for it", 1)
run_turn.__name__, run_turn.__qualname__ = "run_turn", "run_turn"  # wraps() copied run_turn_async's


_SEED_ONLY = {"streaming": True, "max_retries": 3, "output": None, "hook_ctx": None, "strict": False}
"""run_turn's arguments that only the seed lifecycle has, with their defaults."""


def _assistant_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """run_turn's arguments as ``yao.turns.run_with_assistant`` takes them (a seed-only one is refused)."""
    given = [name for name, default in _SEED_ONLY.items() if arguments.get(name) != default]
    if given:
        raise TypeError(f"run_turn(assistant=…): {', '.join(given)} {'is' if len(given) == 1 else 'are'} the seed "
                        "lifecycle's, not a Yao assistant request's (see run_turn's docstring)")
    fields = dict(arguments.get("ctx_fields") or {})
    return {"context": arguments["context"], "user_input": arguments["user_input"],
            "assistant": arguments["assistant"], "view": arguments.get("view"), "model": arguments.get("model"),
            "hooks": arguments.get("hooks"), "tools": arguments.get("tools"),
            "max_tool_rounds": arguments.get("max_tool_rounds"), "accept": arguments.get("accept", "cui-web"),
            "options": arguments.get("options"), "connectors": arguments.get("connectors"),
            "prices": arguments.get("prices"), "budget": arguments.get("budget"), **fields}
