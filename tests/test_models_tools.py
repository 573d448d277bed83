"""Tool / as_tools / result_message: schemas from signatures and docstrings, checked calls, results.

Every expected schema below is written out by hand from what JSON Schema (as pydantic 2 emits it)
says about each annotation; ``title`` keys are not expected (the module strips pydantic's titles).
No ``from __future__ import annotations`` here: the annotations are real objects, and the tool
functions live at module level so their hints resolve.
"""

import datetime
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest

from agentctx_widgets.models.tools import Tool, ToolDefinitionError, as_tools, result_message

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing


# -- tool functions ---------------------------------------------------------------------------------


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather for a city.

    Reads the nearest station.

    Args:
        city: The city's name, e.g. "Paris".
        unit: The temperature unit.
    """
    return f"21 {unit} in {city}"


def convert(value: float, digits: int = 1, exact: bool = False) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Parameters
    ----------
    value : float
        The temperature in Celsius.
    digits : int
        How many digits to round to.

    Returns
    -------
    float
        The temperature in Fahrenheit.
    """
    return round(value * 9 / 5 + 32, digits)


def no_doc(tags: list[str], note: Optional[str] = None):
    return tags, note


def untyped(value):
    return value


def paged(query: str, page: Annotated[int, pydantic.Field(ge=1)] = 1) -> list:
    """Search.

    Args:
        page: The page, from 1.
    """
    return [query, page]


class Place(pydantic.BaseModel):
    city: str
    country: str = "FR"


def locate(place: Place, radius_km: float = 10.0) -> dict:
    """Find things around a place."""
    return {"city": place.city, "radius": radius_km}


def with_title_default(options: dict = {"title": "Report", "pages": 2}) -> str:  # noqa: B006 - the default is the point
    return "ok"


class Greeter:
    """Greet someone."""

    def __call__(self, name: str) -> str:
        return f"hi {name}"


# -- schemas ----------------------------------------------------------------------------------------


def test_google_docstring_gives_description_and_parameter_descriptions():
    tool = Tool(get_weather)
    assert tool.name == "get_weather" and repr(tool) == "Tool('get_weather')"
    assert tool.is_async is False
    assert tool.spec == {
        "name": "get_weather",
        "description": "Get the current weather for a city.\n\nReads the nearest station.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": 'The city\'s name, e.g. "Paris".'},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                         "description": "The temperature unit."},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    }


def test_numpy_docstring_float_int_bool_and_a_parameter_without_description():
    assert Tool(convert).spec == {
        "name": "convert",
        "description": "Convert a temperature from Celsius to Fahrenheit.",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The temperature in Celsius."},
                "digits": {"type": "integer", "default": 1, "description": "How many digits to round to."},
                "exact": {"type": "boolean", "default": False},
            },
            "required": ["value"],
            "additionalProperties": False,
        },
    }


def test_no_docstring_list_and_optional():
    assert Tool(no_doc).spec == {
        "name": "no_doc",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            "required": ["tags"],
            "additionalProperties": False,
        },
    }


def test_an_unannotated_parameter_accepts_anything():
    assert Tool(untyped).spec["parameters"] == {
        "type": "object", "properties": {"value": {}}, "required": ["value"], "additionalProperties": False,
    }
    assert Tool(untyped).check({"value": [1, "two"]}) == {"value": [1, "two"]}


def test_annotated_field_constraint_and_docstring_description_combine():
    assert Tool(paged).spec == {
        "name": "paged",
        "description": "Search.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "page": {"type": "integer", "minimum": 1, "default": 1, "description": "The page, from 1."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    }


def test_a_nested_pydantic_model_parameter_is_a_ref_into_defs():
    assert Tool(locate).spec == {
        "name": "locate",
        "description": "Find things around a place.",
        "parameters": {
            "$defs": {
                "Place": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "country": {"type": "string", "default": "FR"}},
                    "required": ["city"],
                }
            },
            "type": "object",
            "properties": {"place": {"$ref": "#/$defs/Place"}, "radius_km": {"type": "number", "default": 10.0}},
            "required": ["place"],
            "additionalProperties": False,
        },
    }


def test_title_stripping_leaves_default_values_alone():
    # only pydantic's schema titles are noise; a "title" key inside a default value is data
    assert Tool(with_title_default).spec["parameters"]["properties"]["options"] == {
        "type": "object", "additionalProperties": True, "default": {"title": "Report", "pages": 2},
    }


def keyword_names(default: int, title: str = "x", enum: list[str] = ["title"]) -> None:  # noqa: B006
    return None


def test_parameters_named_like_schema_keywords_are_schemas_too():
    assert Tool(keyword_names).spec["parameters"] == {
        "type": "object",
        "properties": {
            "default": {"type": "integer"},
            "title": {"type": "string", "default": "x"},
            "enum": {"type": "array", "items": {"type": "string"}, "default": ["title"]},
        },
        "required": ["default"],
        "additionalProperties": False,
    }


def test_name_and_description_can_be_given_and_callable_objects_work():
    tool = Tool(get_weather, name="weather", description="")
    assert tool.name == "weather" and tool.spec["description"] == "" and tool.spec["name"] == "weather"
    greeter = Tool(Greeter())
    assert greeter.name == "Greeter"
    assert greeter.spec == {
        "name": "Greeter",
        "description": "Greet someone.",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
                       "additionalProperties": False},
    }
    assert greeter.check({"name": "Ada"}) == {"name": "Ada"}


def test_an_async_tool_is_marked_async():
    async def fetch(url: str) -> str:
        return url

    assert Tool(fetch).is_async is True


# -- check ------------------------------------------------------------------------------------------


def test_check_accepts_good_arguments_and_fills_defaults():
    assert Tool(get_weather).check({"city": "Paris"}) == {"city": "Paris", "unit": "celsius"}
    assert Tool(get_weather).check({"city": "Oslo", "unit": "fahrenheit"}) == {"city": "Oslo", "unit": "fahrenheit"}
    assert Tool(convert).check({"value": 20}) == {"value": 20.0, "digits": 1, "exact": False}
    assert Tool(no_doc).check({"tags": ["a", "b"]}) == {"tags": ["a", "b"], "note": None}
    assert Tool(paged).check({"query": "q", "page": 3}) == {"query": "q", "page": 3}


def test_check_builds_the_nested_model():
    checked = Tool(locate).check({"place": {"city": "Lyon"}})
    assert checked == {"place": Place(city="Lyon", country="FR"), "radius_km": 10.0}
    assert isinstance(checked["place"], Place)


def test_check_wrong_types():
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check({"city": 42})
    assert str(info.value) == "invalid arguments for get_weather: city: Input should be a valid string"
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check({"city": "Paris", "unit": "kelvin"})
    assert str(info.value) == "invalid arguments for get_weather: unit: Input should be 'celsius' or 'fahrenheit'"
    with pytest.raises(ValueError) as info:
        Tool(convert).check({"value": "warm"})
    assert str(info.value) == "invalid arguments for convert: value: Input should be a valid number, unable to parse string as a number"


def test_check_reports_nested_locations_with_dots():
    with pytest.raises(ValueError) as info:
        Tool(no_doc).check({"tags": ["a", 2]})
    assert str(info.value) == "invalid arguments for no_doc: tags.1: Input should be a valid string"
    with pytest.raises(ValueError) as info:
        Tool(locate).check({"place": {"country": "FR"}})
    assert str(info.value) == "invalid arguments for locate: place.city: Field required"


def test_check_constraint_from_annotated_field():
    with pytest.raises(ValueError) as info:
        Tool(paged).check({"query": "q", "page": 0})
    assert str(info.value) == "invalid arguments for paged: page: Input should be greater than or equal to 1"


def test_check_missing_required_and_extra_keys():
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check({})
    assert str(info.value) == "invalid arguments for get_weather: city: Field required"
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check({"city": "Paris", "country": "FR"})
    assert str(info.value) == "invalid arguments for get_weather: country: Extra inputs are not permitted"
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check({"town": "Paris"})
    assert str(info.value) == ("invalid arguments for get_weather: city: Field required; "
                               "town: Extra inputs are not permitted")


def test_check_raw_unparsable_json_and_non_objects():
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check('{"city": "Par')
    assert str(info.value) == "the arguments are not valid JSON: '{\"city\": \"Par'"
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check("x" * 300)
    assert str(info.value) == f"the arguments are not valid JSON: '{'x' * 200}'"  # cut at 200 characters
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check(["Paris"])
    assert str(info.value) == "the arguments must be a JSON object, got list"
    with pytest.raises(ValueError) as info:
        Tool(get_weather).check(None)
    assert str(info.value) == "the arguments must be a JSON object, got NoneType"


# -- definition errors ------------------------------------------------------------------------------


def star_args(*cities: str) -> str:
    return ",".join(cities)


def star_kwargs(city: str, **extra: Any) -> str:
    return city


def positional_only(city: str, /) -> str:
    return city


def unresolvable(city: "NoSuchType") -> str:  # noqa: F821 - unresolvable on purpose
    return city


def test_var_positional_and_var_keyword_are_refused():
    with pytest.raises(ToolDefinitionError) as info:
        Tool(star_args)
    assert str(info.value) == "tools: star_args takes *cities; a tool's parameters must be named"
    with pytest.raises(ToolDefinitionError) as info:
        Tool(star_kwargs)
    assert str(info.value) == "tools: star_kwargs takes **extra; a tool's parameters must be named"


def test_positional_only_is_refused():
    with pytest.raises(ToolDefinitionError) as info:
        Tool(positional_only)
    assert str(info.value) == ("tools: positional_only's parameter city is positional-only; "
                               "tools are called with keywords")


def test_invalid_names_are_refused():
    with pytest.raises(ToolDefinitionError) as info:
        Tool(lambda city: city)
    assert str(info.value) == "tools: '<lambda>' is not a valid tool name (letters, digits, _ and -, at most 64)"
    with pytest.raises(ToolDefinitionError) as info:
        Tool(get_weather, name="x" * 65)
    assert str(info.value) == f"tools: {'x' * 65!r} is not a valid tool name (letters, digits, _ and -, at most 64)"
    assert Tool(get_weather, name="x" * 64).name == "x" * 64
    assert Tool(get_weather, name="get-weather_2").name == "get-weather_2"


def test_unreadable_hints_and_non_callables_are_refused():
    with pytest.raises(ToolDefinitionError) as info:
        Tool(unresolvable)
    assert str(info.value) == "tools: cannot read the signature of unresolvable: name 'NoSuchType' is not defined"
    with pytest.raises(ToolDefinitionError) as info:
        Tool(123)
    assert str(info.value) == "tools: expected a callable, got int 123"


def test_tool_definition_error_is_a_type_error():
    assert issubclass(ToolDefinitionError, TypeError)


# -- as_tools ---------------------------------------------------------------------------------------


def test_as_tools_wraps_callables_and_keeps_tools():
    made = Tool(convert)
    tools = as_tools([get_weather, made])
    assert [tool.name for tool in tools] == ["get_weather", "convert"]
    assert isinstance(tools[0], Tool) and tools[1] is made
    assert as_tools(None) == [] and as_tools([]) == []
    assert [tool.name for tool in as_tools(iter([get_weather]))] == ["get_weather"]


def test_as_tools_refuses_two_tools_of_one_name():
    with pytest.raises(ToolDefinitionError) as info:
        as_tools([get_weather, get_weather])
    assert str(info.value) == "tools[1]: a second tool named 'get_weather'"
    with pytest.raises(ToolDefinitionError) as info:
        as_tools([convert, get_weather, Tool(convert, name="get_weather")])
    assert str(info.value) == "tools[2]: a second tool named 'get_weather'"


def test_as_tools_names_the_position_of_a_bad_tool():
    with pytest.raises(ToolDefinitionError) as info:
        as_tools([get_weather, lambda city: city])
    assert str(info.value) == "tools[1]: '<lambda>' is not a valid tool name (letters, digits, _ and -, at most 64)"
    with pytest.raises(ToolDefinitionError) as info:
        as_tools([star_args])
    assert str(info.value) == "tools[0]: star_args takes *cities; a tool's parameters must be named"
    with pytest.raises(ToolDefinitionError) as info:
        as_tools([get_weather, convert, "get_weather"])
    assert str(info.value) == "tools[2]: expected a callable, got str 'get_weather'"


# -- result_message ---------------------------------------------------------------------------------


def test_result_message_of_a_string_is_the_text_as_is():
    assert result_message("c1", "get_weather", "21°C, {not json}") == {
        "type": 4, "callId": "c1", "name": "get_weather",
        "content": [{"type": "text", "text": "21°C, {not json}"}],
    }


def test_result_message_of_a_dict_is_compact_json_text():
    message = result_message("c2", "convert", {"value": 69.8, "unit": "°F", "ok": True, "none": None, 3: "x"})
    assert message == {
        "type": 4, "callId": "c2", "name": "convert",
        "content": [{"type": "text", "text": '{"value":69.8,"unit":"°F","ok":true,"none":null,"3":"x"}'}],
    }


def test_result_message_of_other_values():
    assert result_message("c", "t", [1, "a"])["content"][0]["text"] == '[1,"a"]'
    assert result_message("c", "t", None)["content"][0]["text"] == "null"
    assert result_message("c", "t", 3.5)["content"][0]["text"] == "3.5"
    assert result_message("c", "t", (1, 2))["content"][0]["text"] == "[1,2]"
    assert result_message("c", "t", {"when": datetime.date(2024, 5, 1)})["content"][0]["text"] == '{"when":"2024-05-01"}'
    assert result_message("c", "t", {"size": frozenset([7])})["content"][0]["text"] == '{"size":[7]}'


def test_result_message_of_a_pydantic_model_is_its_json():
    assert result_message("c3", "locate", Place(city="Lyon")) == {
        "type": 4, "callId": "c3", "name": "locate",
        "content": [{"type": "text", "text": '{"city":"Lyon","country":"FR"}'}],
    }
    nested = result_message("c3", "locate", {"places": [Place(city="Nice", country="FR")]})
    assert nested["content"][0]["text"] == '{"places":[{"city":"Nice","country":"FR"}]}'


def test_result_message_of_an_error():
    assert result_message("c4", "get_weather", error="get_weather raised ValueError: no such city") == {
        "type": 4, "callId": "c4", "name": "get_weather",
        "content": [{"type": "text", "text": "get_weather raised ValueError: no such city"}],
        "error": True,
    }
    # an error wins over a value, and an empty error text is still an error
    assert result_message("c5", "t", "ignored", error="")["error"] is True
    assert result_message("c5", "t", "ignored", error="")["content"] == [{"type": "text", "text": ""}]
