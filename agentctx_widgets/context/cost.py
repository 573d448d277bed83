"""What a model call cost in money: the kit's usage priced from the ``genai-prices`` table (issue 23).

``cost(usage, model, provider=None, *, prices=None, at=None)`` returns a :class:`Cost`. The prices are
``genai-prices``' (the maintained table pydantic-ai and logfire use), never a table of ours: this module
maps the kit's usage onto its ``Usage``, calls ``genai_prices.calc_price`` and keeps what it returns.

How each token kind is counted (the kit's canonical usage, ``usage_data.usage_normalize``):

- ``inputTokens`` is every input token, cached or not (OpenAI's ``prompt_tokens`` / Responses'
  ``input_tokens`` already include ``cached_tokens``; for Anthropic the normaliser adds
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` to ``input_tokens``). That is what
  genai-prices calls ``input_tokens``: it prices ``cacheReadTokens`` at the cache-read rate,
  ``cacheWriteTokens`` at the cache-write rate (Anthropic's ``cache_creation.ephemeral_1h_input_tokens``,
  kept in ``usage["details"]``, at the one-hour rate) and the rest at the input rate.
- ``outputTokens`` includes ``reasoningTokens`` (OpenAI's ``completion_tokens_details.reasoning_tokens``,
  Responses' ``output_tokens_details.reasoning_tokens``): reasoning is priced as output unless the table
  prices it apart (``parts["reasoning"]``).
- From ``usage["details"]``: OpenAI's ``prompt_tokens_details.audio_tokens`` /
  ``completion_tokens_details.audio_tokens`` (audio rates where the table has them),
  ``prompt_tokens_details.cache_write_tokens`` / ``input_tokens_details.cache_write_tokens``, Anthropic's
  ``server_tool_use.web_search_requests`` and ``speed``.
- ``serviceTier`` selects the table's variant (OpenAI ``flex`` / ``priority``; Anthropic's ``batch`` is
  ``processing: batch``). Long-context tiers are the table's: a tier applies to one call's input, so a
  turn's cost is the sum of its calls' costs (:func:`cost_of_calls`), not the cost of its summed usage.
- ``source: "estimate"`` (``estimate_usage`` / ``finalize_usage`` without a full provider report) makes
  the cost ``estimated``; an estimate's cache or reasoning counts are cut to the estimated totals.

Amounts are :class:`~decimal.Decimal` US dollars (genai-prices computes in Decimal and only in USD), so
sums over calls are exact. A model the table does not know is *unpriced*: ``total`` is ``None``, never 0,
and the message says how to give a price. ``prices=`` gives or overrides prices, in USD per million tokens::

    prices={"my-model": {"input": 1.0, "output": 2.0, "cache_read": 0.1, "cache_write": 1.25},
            "llama3.2": "free"}           # or 0: a local model costs nothing

Keys: ``input`` and ``output`` (both required), ``cache_read``, ``cache_write``, ``cache_write_1h`` (needs
``cache_write``), ``reasoning``. A key matches the model name exactly, then case-insensitively, then as
``"provider:model"``. Without ``cache_read`` a cached token is priced as input (and likewise for writes).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import Any, NamedTuple

from .usage_data import usage_normalize

__all__ = ["PRICE_KEYS", "Cost", "PriceError", "Repriced", "cost", "cost_delta", "cost_of_calls", "recorded_cost",
           "table_prices"]

CURRENCY = "USD"

PRICE_KEYS = MappingProxyType({
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
    "cache_write_1h": "cache_write_1h_mtok",
    "reasoning": "output_reasoning_mtok",
})
"""The keys of one ``prices=`` entry (USD per million tokens) and the genai-prices price each one sets."""

FREE = "free"
USER_SOURCE = "prices="
FREE_SOURCE = "prices= (free)"
_PART_ORDER = ("input", "cache_read", "cache_write", "output", "reasoning")
_ZERO = Decimal(0)


class PriceError(ValueError):
    """A ``prices=`` argument that cannot be used; the message names the entry and key."""


# -- the value --------------------------------------------------------------------------------------


class Cost:
    """What one call (or a sum of calls) cost: a small immutable value.

    ``total``: Decimal USD, or ``None`` when nothing in it was priced (never 0 for an unknown model).
    When some calls were priced and some not, ``total`` is what the priced ones cost and ``unpriced``
    names the others (``complete`` is False; ``str()`` says so). ``parts``: ``input``, ``output`` always,
    and ``cache_read``, ``cache_write``, ``reasoning`` or other charges of the table (``web_searches``)
    where they cost something; they add up to ``total``. ``source``: the table that priced it, with its
    version (``genai-prices 0.2.3 (bundled data)``), or ``prices=``. ``estimated``: some usage was
    estimated, not reported by the provider. ``priced_as``: the table's ``provider/model`` ids that
    matched. ``calls``: how many calls are summed. ``Cost`` values add (``sum(costs)`` works).
    """

    __slots__ = ("total", "currency", "parts", "source", "estimated", "unpriced", "priced_as", "calls",
                 "free", "_priced")

    total: Decimal | None
    currency: str
    parts: Mapping[str, Decimal]
    source: str
    estimated: bool
    unpriced: tuple[str, ...]
    priced_as: tuple[str, ...]
    calls: int
    free: bool

    def __init__(self, total: Decimal | None, parts: Mapping[str, Decimal] | None = None, *, source: str = "",
                 estimated: bool = False, unpriced: Iterable[str] = (), priced_as: Iterable[str] = (),
                 calls: int = 1, free: bool = False, currency: str = CURRENCY, priced: int | None = None) -> None:
        ordered = _ordered_parts(parts or {})
        unpriced = tuple(unpriced)
        if priced is None:
            priced = calls if total is not None and not unpriced else 0
        values = {"total": total, "currency": currency, "parts": MappingProxyType(ordered), "source": source,
                  "estimated": bool(estimated), "unpriced": unpriced, "priced_as": tuple(priced_as),
                  "calls": calls, "free": bool(free), "_priced": priced}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Cost is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Cost is immutable: cannot delete {name!r}")

    @classmethod
    def zero(cls) -> Cost:
        """The cost of no calls: $0, nothing unpriced (the start of a sum)."""
        return cls(_ZERO, {}, calls=0, priced=0)

    @property
    def complete(self) -> bool:
        """Every call in it was priced."""
        return not self.unpriced

    @property
    def message(self) -> str | None:
        """How to give a price to the unpriced models, or ``None`` when every call was priced."""
        if not self.unpriced:
            return None
        names = ", ".join(self.unpriced)
        example = next((m for m in self.unpriced if m != _NO_MODEL), "my-model")
        return (f"unpriced: {names} — {_table_name()} has no price for it; give one in USD per million "
                f"tokens: prices={{{example!r}: {{'input': ..., 'output': ...}}}}, or "
                f"prices={{{example!r}: 'free'}} for a local model")

    def __add__(self, other: Any) -> Cost:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        if not isinstance(other, Cost):
            return NotImplemented
        if other.currency != self.currency:
            raise ValueError(f"Cost: cannot add {other.currency} to {self.currency}")
        priced = self._priced + other._priced
        total = None if priced == 0 and (self.unpriced or other.unpriced) else \
            (self.total or _ZERO) + (other.total or _ZERO)
        parts = dict(self.parts)
        for name, amount in other.parts.items():
            parts[name] = parts.get(name, _ZERO) + amount
        free = (self.free or self._priced == 0) and (other.free or other._priced == 0) and priced > 0
        return Cost(total, parts, source=_joined(self.source, other.source),
                    estimated=self.estimated or other.estimated,
                    unpriced=_union(self.unpriced, other.unpriced), priced_as=_union(self.priced_as, other.priced_as),
                    calls=self.calls + other.calls, free=free, currency=self.currency, priced=priced)

    def __radd__(self, other: Any) -> Cost:
        return self.__add__(other)

    def _key(self) -> tuple:
        return (self.total, self.currency, tuple(self.parts.items()), self.source, self.estimated, self.unpriced,
                self.priced_as, self.calls, self.free, self._priced)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cost) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        est = " (est.)" if self.estimated else ""
        if self.total is None:
            return f"{self.message}{est}"
        shown = money(self.total, self.currency)
        if self.free and self.total == 0:
            shown += " (free)"
        if self.unpriced:
            return f"{shown} + unpriced: {', '.join(self.unpriced)}{est}"
        return shown + est

    def __repr__(self) -> str:
        if self.total is None:
            return f"Cost(unpriced: {', '.join(self.unpriced)})"
        parts = ", ".join(f"{name}={money(amount, self.currency)}" for name, amount in self.parts.items())
        flags = "".join((" estimated" if self.estimated else "",
                         f" unpriced={list(self.unpriced)}" if self.unpriced else ""))
        return f"Cost({money(self.total, self.currency)}: {parts}; {self.source or 'no source'}{flags})"

    def to_dict(self) -> dict:
        """A JSON-ready snapshot (camelCase keys, amounts as numbers): what a recording keeps."""
        return {"total": None if self.total is None else float(self.total), "currency": self.currency,
                "parts": {name: float(amount) for name, amount in self.parts.items()}, "source": self.source,
                "estimated": self.estimated, "unpriced": list(self.unpriced), "pricedAs": list(self.priced_as),
                "calls": self.calls, "pricedCalls": self._priced, "free": self.free}

    @classmethod
    def from_dict(cls, data: Any) -> Cost:
        """A :class:`Cost` back from :meth:`to_dict`'s output; ``ValueError`` naming the bad field."""
        if not isinstance(data, Mapping):
            raise ValueError(f"Cost.from_dict: expected a mapping, got {type(data).__name__}")
        total = None if data.get("total") is None else _amount_from(data.get("total"), "total")
        parts = data.get("parts", {})
        if not isinstance(parts, Mapping) or len(parts) > 64:
            raise ValueError("Cost.from_dict: parts must be a mapping of at most 64 amounts")
        names = [_short_string(data, "unpriced", item) for item in _strings(data, "unpriced")]
        calls = data.get("calls", 1)
        priced = data.get("pricedCalls")
        for key, value in (("calls", calls), ("pricedCalls", priced)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"Cost.from_dict: {key} must be a non-negative integer, got {value!r}")
        return cls(total, {_short_string(data, "parts", k): _amount_from(v, f"parts[{k!r}]") for k, v in parts.items()},
                   source=_short_string(data, "source", data.get("source", "")),
                   estimated=data.get("estimated") is True, unpriced=names,
                   priced_as=[_short_string(data, "pricedAs", item) for item in _strings(data, "pricedAs")],
                   calls=calls, free=data.get("free") is True,
                   currency=_short_string(data, "currency", data.get("currency", CURRENCY)), priced=priced)


def money(amount: Decimal, currency: str = CURRENCY) -> str:
    """``$0.0123``: two decimals from $1, at most four from a cent, else at most three significant digits
    (trailing zeros dropped below $1); ``$0`` for 0."""
    sign = "$" if currency == "USD" else f"{currency} "
    if amount == 0:
        return f"{sign}0"
    size = abs(amount)
    if size >= 1:
        places = Decimal("0.01")
    elif size >= Decimal("0.01"):
        places = Decimal("0.0001")
    else:
        places = Decimal(1).scaleb(size.adjusted() - 2)
    shown = amount.quantize(places, rounding=ROUND_HALF_UP)
    text = f"{abs(shown):f}"
    if size < 1:  # 0.99996 rounds up to 1.0000: "$1", as the front end's money() shows it, not "$1."
        text = text.rstrip("0").rstrip(".")
    return f"{'-' if shown < 0 else ''}{sign}{text}"


def cost_label(cost: Cost, *, approx: str = "≈{}", unpriced: str = "unpriced", partly: str | None = None) -> str:
    """One cost in a line, the one rule every place that shows a cost follows: ``money(total)``, an
    estimate wrapped in ``approx`` (``"≈{}"``; the view's documents ``"≈ {}"``; a text table, which has no
    tooltip, ``"≈{} (estimated)"``), ``(free)`` for a model priced free, ``+ <partly>`` when some calls had
    no price (``partly`` defaults to ``unpriced``), and ``unpriced`` alone when none had — never $0."""
    if cost.total is None:
        return unpriced
    shown = money(cost.total, cost.currency)
    if cost.estimated:
        shown = approx.format(shown)
    if cost.free and cost.total == 0:
        shown += " (free)"
    if cost.unpriced:
        shown += f" + {unpriced if partly is None else partly}"
    return shown


def _ordered_parts(parts: Mapping[str, Decimal]) -> dict[str, Decimal]:
    known = [name for name in _PART_ORDER if name in parts]
    return {name: parts[name] for name in [*known, *sorted(set(parts) - set(known))]}


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return first + tuple(item for item in second if item not in first)


def _joined(first: str, second: str) -> str:
    items = _union(tuple(first.split(" + ")) if first else (), tuple(second.split(" + ")) if second else ())
    return " + ".join(items)


def _strings(data: Mapping, key: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list) or len(value) > 256:
        raise ValueError(f"Cost.from_dict: {key} must be a list of at most 256 strings")
    return value


def _short_string(data: Mapping, key: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) > 1024:
        raise ValueError(f"Cost.from_dict: {key} must hold strings of at most 1024 characters, got {value!r:.60}")
    return value


def _amount_from(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"Cost.from_dict: {where} must be a finite number, got {value!r:.60}")
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


# -- prices= ----------------------------------------------------------------------------------------


def _price_number(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise PriceError(f"{where}: must be a number of USD per million tokens, got {type(value).__name__} {value!r:.60}")
    number = value if isinstance(value, Decimal) else Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    if not number.is_finite() or number < 0:
        raise PriceError(f"{where}: must be a finite, non-negative number of USD per million tokens, got {value!r}")
    return number


def _user_price(name: str, spec: Any, where: str | None = None) -> tuple[dict[str, Decimal], bool]:
    """One ``prices=`` entry as genai-prices ``ModelPrice`` keyword arguments, and whether it is free."""
    where = where or f"prices[{name!r}]"
    if (isinstance(spec, str) and spec == FREE) or \
            (isinstance(spec, (int, float, Decimal)) and not isinstance(spec, bool) and spec == 0):
        return {"input_mtok": _ZERO, "output_mtok": _ZERO}, True
    if not isinstance(spec, Mapping):
        raise PriceError(f"{where}: must be {{'input': ..., 'output': ...}} (USD per million tokens), 'free' or 0, "
                         f"got {type(spec).__name__} {spec!r:.60}")
    unknown = [key for key in spec if key not in PRICE_KEYS]
    if unknown:
        raise PriceError(f"{where}.{unknown[0]}: not a price key; the keys are {', '.join(PRICE_KEYS)}")
    missing = [key for key in ("input", "output") if key not in spec]
    if missing:
        raise PriceError(f"{where}.{missing[0]}: missing; 'input' and 'output' are required (USD per million tokens)")
    if "cache_write_1h" in spec and "cache_write" not in spec:
        raise PriceError(f"{where}.cache_write_1h: needs 'cache_write' too (the 5-minute rate)")
    price = {PRICE_KEYS[key]: _price_number(value, f"{where}.{key}") for key, value in spec.items()}
    return price, all(value == 0 for value in price.values())


def check_prices(prices: Any) -> dict[str, tuple[dict[str, Decimal], bool]]:
    """``prices=`` validated (every entry, before anything is priced): name -> (ModelPrice kwargs, free)."""
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise PriceError(f"prices: must be a dict of model name -> price, got {type(prices).__name__}")
    checked = {}
    for name, spec in prices.items():
        if not isinstance(name, str) or not name.strip():
            raise PriceError(f"prices: every key must be a model name (a non-empty string), got {name!r:.60}")
        checked[name] = _user_price(name, spec)
    return checked


def _user_lookup(checked: Mapping[str, tuple], model: str, provider: str | None) -> tuple[Any, str, Any]:
    """``prices=``' entry for ``model`` (or ``None``), and the model and provider the table is asked for
    without one: the entry as ``model`` is named, else as ``"provider:model"`` names a provider it knows."""
    entry = _user_entry(checked, model, provider)
    if entry is not None:
        return entry, model, provider
    name, provider = _split_provider(model, provider)
    return (_user_entry(checked, name, provider) if name != model else None), name, provider


def _user_entry(checked: Mapping[str, tuple], model: str, provider: str | None) -> tuple | None:
    names = [model, *([f"{provider}:{model}"] if provider else [])]
    for name in names:
        if name in checked:
            return checked[name]
    folded = {key.casefold(): value for key, value in checked.items()}
    return next((folded[name.casefold()] for name in names if name.casefold() in folded), None)


# -- the usage genai-prices is given ------------------------------------------------------------------

COUNT_KEYS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                        "cache_write_5m_tokens", "cache_write_1h_tokens", "output_reasoning_tokens",
                        "input_audio_tokens", "output_audio_tokens", "web_searches"})
"""The genai-prices ``Usage`` keys :func:`usage_counts` sets (a key it leaves out is 0)."""


def _count(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return 0
    return value


def _detail(details: Any, *path: str) -> int | float:
    for key in path:
        details = details.get(key) if isinstance(details, Mapping) else None
    return _count(details)


def usage_counts(usage: Any) -> tuple[dict[str, int | float], dict[str, str], bool]:
    """The kit's usage as genai-prices ``Usage`` keyword arguments, its price context, and ``estimated``."""
    canonical = usage_normalize(usage)
    details = canonical.get("details") if isinstance(canonical.get("details"), Mapping) else {}
    estimated = canonical.get("source") == "estimate"
    inputs, outputs = _count(canonical.get("inputTokens")), _count(canonical.get("outputTokens"))
    write = _count(canonical.get("cacheWriteTokens")) or _detail(details, "prompt_tokens_details", "cache_write_tokens") \
        or _detail(details, "input_tokens_details", "cache_write_tokens")
    write_5m = _detail(details, "cache_creation", "ephemeral_5m_input_tokens")
    write_1h = _detail(details, "cache_creation", "ephemeral_1h_input_tokens")
    counts = {
        "input_tokens": inputs, "output_tokens": outputs,
        "cache_read_tokens": _count(canonical.get("cacheReadTokens")),
        "cache_write_tokens": max(write, write_5m + write_1h),
        "cache_write_5m_tokens": write_5m, "cache_write_1h_tokens": write_1h,
        "output_reasoning_tokens": _count(canonical.get("reasoningTokens")),
        "input_audio_tokens": _detail(details, "prompt_tokens_details", "audio_tokens"),
        "output_audio_tokens": _detail(details, "completion_tokens_details", "audio_tokens"),
        "web_searches": _detail(details, "server_tool_use", "web_search_requests"),
    }
    if estimated:  # an estimate's totals are the estimator's; the provider's subsets cannot exceed them
        _cut_to_estimate(counts)
    context = {}
    tier = canonical.get("serviceTier")
    if tier == "batch":
        context["processing"] = "batch"
    elif isinstance(tier, str) and tier:
        context["service_tier"] = tier
    if isinstance(details.get("speed"), str) and details["speed"]:
        context["speed"] = details["speed"]
    return {key: value for key, value in counts.items() if value}, context, estimated


def _cut_to_estimate(counts: dict[str, int | float]) -> None:
    counts["cache_read_tokens"] = min(counts["cache_read_tokens"], counts["input_tokens"])
    left = counts["input_tokens"] - counts["cache_read_tokens"]
    counts["cache_write_tokens"] = min(counts["cache_write_tokens"], left)
    counts["cache_write_1h_tokens"] = min(counts["cache_write_1h_tokens"], counts["cache_write_tokens"])
    counts["cache_write_5m_tokens"] = min(counts["cache_write_5m_tokens"],
                                          counts["cache_write_tokens"] - counts["cache_write_1h_tokens"])
    counts["input_audio_tokens"] = min(counts["input_audio_tokens"], left - counts["cache_write_tokens"])
    counts["output_reasoning_tokens"] = min(counts["output_reasoning_tokens"], counts["output_tokens"])
    counts["output_audio_tokens"] = min(counts["output_audio_tokens"],
                                        counts["output_tokens"] - counts["output_reasoning_tokens"])


# -- pricing ----------------------------------------------------------------------------------------

_NO_MODEL = "(no model named)"


def _table_name(auto_update: datetime | None = None) -> str:
    import genai_prices

    if auto_update is not None:
        return f"genai-prices {genai_prices.__version__} (data fetched {auto_update:%Y-%m-%d %H:%M})"
    return f"genai-prices {genai_prices.__version__} (bundled data)"


def _part_name(price_key: str) -> str:
    if "reasoning" in price_key:
        return "reasoning"
    if price_key.startswith("cache_"):
        return "cache_read" if "_read" in price_key else "cache_write"
    if price_key.startswith("input"):
        return "input"
    if price_key.startswith("output"):
        return "output"
    for suffix in ("_mtok", "_kcount", "_mcount"):
        if price_key.endswith(suffix):
            return price_key[: -len(suffix)]
    return price_key


def _usage_key(price_key: str) -> str | None:
    """genai-prices' naming: ``cache_read_mtok`` prices ``cache_read_tokens``, ``web_searches_kcount`` ``web_searches``."""
    if price_key.endswith("_mtok"):
        return price_key[: -len("_mtok")] + "_tokens"
    if price_key.endswith("_kcount"):
        return price_key[: -len("_kcount")]
    return None


def _share(prices: Mapping[str, Any], key: str, usage: Any) -> Decimal:
    """``prices[key]``'s share of the total: the same prices with every other one 0, priced by genai-prices
    itself (its own split into uncached / cached / written tokens, and its tiers)."""
    from genai_prices.types import ModelPrice

    alone = ModelPrice(**{other: (value if other == key else _ZERO) for other, value in prices.items()})
    return alone.calc_price(usage)["total_price"]


def _parts(model_price: Any, usage: Any, counts: Mapping[str, Any], priced: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """The total by part. The base input and output rates' shares are genai-prices' ``input_price`` /
    ``output_price`` less the other input / output prices' shares (two pricings saved); when that does not
    add up to the total (a charge of a kind this module does not name), those two are priced apart too.
    A price of a count this module sets and left at 0 has no share."""
    prices = {key: value for key, value in vars(model_price).items() if not key.startswith("_") and value is not None}
    shares = {key: _share(prices, key, usage) for key in prices
              if key not in ("input_mtok", "output_mtok")
              and not (_usage_key(key) in COUNT_KEYS and not counts.get(_usage_key(key)))}
    inputs = priced["input_price"] - sum((v for k, v in shares.items() if k.startswith(("input", "cache_"))), _ZERO)
    outputs = priced["output_price"] - sum((v for k, v in shares.items() if k.startswith("output")), _ZERO)
    if inputs < 0 or outputs < 0 or sum(shares.values(), inputs + outputs) != priced["total_price"]:
        inputs, outputs = (_share(prices, key, usage) if key in prices else _ZERO for key in ("input_mtok", "output_mtok"))
    parts = {"input": inputs, "output": outputs}
    for key, amount in shares.items():
        if amount:
            name = _part_name(key)
            parts[name] = parts.get(name, _ZERO) + amount
    return parts


def _priced(model_price: Any, counts: dict, *, source: str, estimated: bool, priced_as: str, free: bool = False,
            priced: Mapping[str, Decimal] | None = None) -> Cost:
    """A priced call: the total as genai-prices gave it (``priced``: its input / output / total price, else
    ``model_price`` applied to ``counts`` here), and its parts."""
    from genai_prices import Usage

    usage = Usage(**counts)
    if priced is None:
        priced = _checked(lambda: model_price.calc_price(usage), counts)
    total = priced["total_price"]
    parts = _parts(model_price, usage, counts, priced)
    rest = total - sum(parts.values(), _ZERO)
    if rest:  # Decimal rounding of a 28-digit sum: kept in the input part so the parts add up to total
        parts["input"] += rest
    return Cost(total, parts, source=source, estimated=estimated, priced_as=(priced_as,), free=free)


def _checked(price: Any, counts: dict) -> Any:
    try:
        return price()
    except ValueError as failure:  # usage genai-prices refuses, e.g. more cached tokens than input tokens
        raise ValueError(f"cost: the usage does not add up ({failure}); usage given to genai-prices: {counts}") from None


def _split_provider(model: str, provider: str | None) -> tuple[str, str | None]:
    """``"openai:gpt-4o"`` (the kit's model spec) -> ``("gpt-4o", "openai")`` when the prefix is a provider
    the table knows; ``"llama3:8b"`` (an Ollama tag) stays as it is."""
    if provider is not None or ":" not in model:
        return model, provider
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    prefix, rest = model.split(":", 1)
    if rest and find_provider_by_id(get_snapshot().providers, prefix) is not None:
        return rest, prefix
    return model, provider


def _where(provider: str | None) -> dict[str, Any]:
    """genai-prices' argument naming the provider: its id, or the API's base URL."""
    if provider is None:
        return {}
    return {"provider_api_url" if provider.startswith(("http://", "https://")) else "provider_id": provider}


def _table_cost(model: str, provider: str | None, counts: dict, context: dict, estimated: bool,
                at: datetime | None) -> Cost:
    from genai_prices import Usage, calc_price

    where = _where(provider)
    try:
        found = _checked(lambda: calc_price(Usage(**counts), model, genai_request_timestamp=at,
                                            price_context=context or None, **where), counts)
    except LookupError:
        return Cost(None, {}, estimated=estimated, unpriced=(model,), priced=0)
    return _priced(found.model_price, counts, source=_table_name(found.auto_update_timestamp), estimated=estimated,
                   priced_as=f"{found.provider.id}/{found.model.id}",
                   priced={"input_price": found.input_price, "output_price": found.output_price,
                           "total_price": found.total_price})


def cost(usage: Any, model: Any, provider: str | None = None, *, prices: Mapping[str, Any] | None = None,
         at: datetime | None = None) -> Cost:
    """What one model call cost (the module docstring says how each token kind is priced).

    ``usage``: the kit's usage dict (``TurnResult.calls[i]["usage"]``, ``finalize_usage``'s result) or a
    provider's raw usage object as a dict. ``model``: the model name (``"gpt-4o"``, or the kit's
    ``"openai:gpt-4o"``); ``provider``: a genai-prices provider id (``"openai"``, ``"anthropic"``) or the
    API's base URL, else guessed from the model name. ``prices``: prices of your own (module docstring),
    checked before anything is priced. ``at``: when the call was made (prices change; default now).
    """
    checked = check_prices(prices)
    if at is not None and not isinstance(at, datetime):
        raise TypeError(f"cost: at must be a datetime, got {type(at).__name__}")
    if provider is not None and (not isinstance(provider, str) or not provider.strip()):
        raise TypeError(f"cost: provider must be a provider id or an API URL, got {provider!r:.60}")
    counts, context, estimated = usage_counts(usage)
    if not isinstance(model, str) or not model.strip():
        return Cost(None, {}, estimated=estimated, unpriced=(_NO_MODEL,), priced=0)
    entry, name, provider = _user_lookup(checked, model, provider)
    if entry is None:
        return _table_cost(name, provider, counts, context, estimated, at)
    from genai_prices.types import ModelPrice

    kwargs, free = entry
    return _priced(ModelPrice(**kwargs), counts, source=FREE_SOURCE if free else USER_SOURCE, estimated=estimated,
                   priced_as=f"prices=/{model}", free=free)


def cost_of_calls(calls: Iterable[Mapping[str, Any]], *, prices: Mapping[str, Any] | None = None,
                  model: str | None = None, provider: str | None = None, at: datetime | None = None,
                  recorded: bool = True) -> Cost:
    """The sum of each call's cost: ``calls`` as ``TurnResult.calls`` keeps them (``{"usage", "model"?,
    "provider"?, "responseModel"?, "recordedPrices"?}``). A call is priced as the model that answered
    (``responseModel``), else the one asked for, else ``model``; ``Cost.zero()`` for no calls. Each call is
    priced on its own (a long-context tier is one call's), which is why a turn's cost is this and not the
    cost of its summed usage. A call with ``recordedPrices`` (a call ``ReplayModel`` replayed, with the
    table's prices of the day it was recorded) is priced at those (:func:`recorded_cost`) unless
    ``prices=`` names its model (yours win) or ``recorded=False`` (today's table, as :func:`reprice` does)."""
    checked = check_prices(prices)
    total = Cost.zero()
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise TypeError(f"cost_of_calls: calls[{index}] must be a dict with 'usage', got {type(call).__name__}")
        name = call.get("responseModel") or call.get("model") or model
        by = call.get("provider") or provider
        kept = _at_recorded(call, checked, name, by, index) if recorded else None
        total += kept if kept is not None else cost(call.get("usage"), name, by, prices=prices, at=at)
    return total


# -- recorded prices: a replayed call keeps the price it was recorded with ---------------------------

RECORDED = "recorded: "
"""How a cost at recorded prices names its source: ``recorded: genai-prices 0.2.3 (bundled data)``."""
RECORDED_KEYS = frozenset({"model", "rates", "source"})
MAX_RECORDED_TEXT = 256
"""A recorded price's ``model`` and ``source`` are strings of at most this many characters."""
_RATE = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,12})?")
"""A recorded rate: a plain decimal string (no sign, exponent, NaN or infinity), at most 12 digits either
side of the point."""
_RATED_COUNTS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                           "cache_write_5m_tokens", "cache_write_1h_tokens", "output_reasoning_tokens"})
"""The usage counts recorded rates price; a call with others (audio tokens, web searches) is priced by the table."""


def table_prices(usage: Any, model: Any, provider: Any = None) -> dict | None:
    """The table's prices in effect for a call of ``model`` with ``usage`` (its service tier, today), as a
    recording keeps them: ``{"model": "gpt-4o", "rates": {"input": "2.5", "output": "10", "cache_read":
    "1.25"}, "source": "genai-prices 0.2.3 (bundled data)"}``. Rates are USD per million tokens as decimal
    strings, under the keys of a ``prices=`` entry that the table sets (``reasoning`` only where it prices
    reasoning apart). A tiered price (a long-context tier) keeps its **base tier**: a recorded call past
    the tier's threshold is priced at the base rate. The table's other charges (audio tokens, web
    searches, per-request fees) are not kept. ``None`` for a model the table does not know, usage it
    refuses, or a price without an input and an output rate."""
    if not isinstance(model, str) or not model.strip():
        return None
    from genai_prices import Usage, calc_price

    name, provider = _split_provider(model, provider if isinstance(provider, str) and provider.strip() else None)
    counts, context, _ = usage_counts(usage)
    try:
        found = calc_price(Usage(**counts), name, price_context=context or None, **_where(provider))
    except (LookupError, ValueError):
        return None
    rates = {}
    for key, price_key in PRICE_KEYS.items():
        value = getattr(found.model_price, price_key, None)
        value = getattr(value, "base", value)  # TieredPrices: its base tier
        if isinstance(value, Decimal) and value.is_finite() and value >= 0:
            rates[key] = format(value.normalize(), "f")
    kept = {"model": name, "rates": rates, "source": _table_name(found.auto_update_timestamp)}
    try:
        recorded_price(kept)
    except PriceError:  # no input or output rate, or a rate too long to keep
        return None
    return kept


def recorded_price(recorded: Any, where: str = "prices") -> tuple[dict[str, Decimal], str, str]:
    """A recorded price (:func:`table_prices`' value) checked, as it comes from a file that may be hostile:
    ``(ModelPrice keyword arguments, source, model)``; :class:`PriceError` naming the field otherwise."""
    if not isinstance(recorded, Mapping):
        raise PriceError(f"{where}: must be an object {{model, rates, source}}, got {type(recorded).__name__}")
    odd = sorted(repr(key) for key in set(recorded) ^ RECORDED_KEYS)
    if odd:
        raise PriceError(f"{where}: a recorded price has exactly the keys model, rates, source; not so for {odd[0]}")
    for key in ("model", "source"):
        value = recorded[key]
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_RECORDED_TEXT:
            raise PriceError(f"{where}.{key}: must be a non-empty string of at most {MAX_RECORDED_TEXT} "
                             f"characters, got {value!r:.60}")
    rates = recorded["rates"]
    if not isinstance(rates, Mapping) or len(rates) > len(PRICE_KEYS):
        raise PriceError(f"{where}.rates: must be an object of at most {len(PRICE_KEYS)} rates "
                         f"({', '.join(PRICE_KEYS)}), got {type(rates).__name__} {rates!r:.60}")
    for key, value in rates.items():
        if not isinstance(value, str) or not _RATE.fullmatch(value):
            raise PriceError(f"{where}.rates.{key}: must be a decimal string of USD per million tokens "
                             f"(like '2.5'), got {value!r:.60}")
    kwargs, _ = _user_price(recorded["model"], {key: Decimal(value) for key, value in rates.items()},
                            f"{where}.rates")
    return kwargs, recorded["source"], recorded["model"]


def recorded_cost(usage: Any, recorded: Any, *, where: str = "recordedPrices") -> Cost | None:
    """What a call cost at the prices it was recorded with (``recorded``: :func:`table_prices`' value),
    priced as a ``prices=`` entry with those rates would be; its ``source`` is ``recorded: <the table of
    that day>``. ``None`` when the usage has counts the rates do not price (audio tokens, web searches):
    such a call is priced by the table. :class:`PriceError` for a bad recorded price."""
    kwargs, source, model = recorded_price(recorded, where)
    counts, _, estimated = usage_counts(usage)
    if set(counts) - _RATED_COUNTS:
        return None
    from genai_prices.types import ModelPrice

    return _priced(ModelPrice(**kwargs), counts, source=RECORDED + source, estimated=estimated,
                   priced_as=f"recorded/{model}", free=all(value == 0 for value in kwargs.values()))


def _at_recorded(call: Mapping[str, Any], checked: Mapping[str, tuple], name: Any, provider: Any,
                 index: int) -> Cost | None:
    """``call`` at its recorded prices, or ``None``: none recorded, ``prices=`` names its model, or usage
    the recorded rates do not price."""
    kept = call.get("recordedPrices")
    if kept is None or _user_names(checked, name, provider):
        return None
    return recorded_cost(call.get("usage"), kept, where=f"calls[{index}].recordedPrices")


def _user_names(checked: Mapping[str, tuple], model: Any, provider: Any) -> bool:
    """Does ``prices=`` have an entry for ``model`` (as :func:`cost` looks one up)?"""
    if not checked or not isinstance(model, str) or not model.strip():
        return False
    return _user_lookup(checked, model, provider if isinstance(provider, str) else None)[0] is not None


def cost_delta(old: Cost | None, new: Cost | None) -> Decimal | None:
    """``new - old`` when both are there and fully priced, else ``None`` (a turn's reprice, a suite's Δ)."""
    if old is None or new is None or old.total is None or new.total is None or old.unpriced or new.unpriced:
        return None
    return new.total - old.total


class Repriced(NamedTuple):
    """The same calls at the prices they were recorded with and at today's table
    (``TurnResult.reprice()``); it unpacks: ``recorded, today = result.reprice()``."""

    recorded: Cost
    today: Cost

    @property
    def delta(self) -> Decimal | None:
        """Today's total less the recorded one; ``None`` when either is not fully priced."""
        return cost_delta(self.recorded, self.today)

    def __str__(self) -> str:
        delta = self.delta
        shown = "—" if delta is None else "none" if delta == 0 else \
            ("+" if delta > 0 else "") + money(delta, self.today.currency)
        return "\n".join((f"recorded prices: {self.recorded} ({self.recorded.source or 'no source'})",
                          f"today's prices:  {self.today} ({self.today.source or 'no source'})",
                          f"Δ cost: {shown}"))

